"""The structured-output form each endpoint and model accepts, found by trying and remembered on disk.

With ``STRATA_LLM_RESPONSE_FORMAT=auto`` a client starts at the strongest form (``json_schema``) and steps
down :data:`~kg.llm.structured.LADDER` when the endpoint refuses one (an HTTP 400/422/500 naming the
response format): at once, without spending the retry budget. The form found is kept per endpoint and model
in ``<cache_dir>/llm/response_formats.json`` so the next run starts there; ``strata config`` shows it.

>>> modes = ResponseFormats(None)
>>> modes.get("http://x/v1", "m")
'json_schema'
>>> modes.step_down("http://x/v1", "m", "json_schema")
'json_object_schema'
>>> modes.get("http://x/v1", "m")
'json_object_schema'
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from kg.llm.structured import LADDER, ResponseMode
from kg.shared.private import write_private

__all__ = ["ResponseFormats"]

log = logging.getLogger(__name__)

FILE_NAME = "response_formats.json"


class ResponseFormats:
    """Negotiated forms by ``"<endpoint> <model>"``; ``folder=None`` keeps them in memory only."""

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / FILE_NAME if folder is not None else None
        self._lock = threading.Lock()
        self._found: dict[str, ResponseMode] = self._read()

    def _read(self) -> dict[str, ResponseMode]:
        if self.path is None or not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}  # a damaged file only costs one negotiation
        return {k: v for k, v in data.items() if v in LADDER} if isinstance(data, dict) else {}

    def known(self, endpoint: str, model: str) -> ResponseMode | None:
        """The form found for this endpoint and model, or None before the first structured call."""
        with self._lock:
            return self._found.get(f"{endpoint} {model}")

    def get(self, endpoint: str, model: str) -> ResponseMode:
        """The form to use: the one found, else the strongest."""
        return self.known(endpoint, model) or LADDER[0]

    def step_down(self, endpoint: str, model: str, refused: ResponseMode) -> ResponseMode | None:
        """Record that ``refused`` was refused; the next form to try, or None when none is left."""
        index = LADDER.index(refused)
        if index + 1 >= len(LADDER):
            return None
        key = f"{endpoint} {model}"
        with self._lock:
            current = self._found.get(key, LADDER[0])
            # Another thread may have stepped further already: never step back up.
            chosen = LADDER[max(index + 1, LADDER.index(current))]
            self._found[key] = chosen
            self._write()
        log.info("structured output form refused", extra={"endpoint": endpoint, "model": model,
                                                          "refused": refused, "next": chosen})
        return chosen

    def confirm(self, endpoint: str, model: str, mode: ResponseMode) -> None:
        """Remember that ``mode`` worked (so the next run does not try the stronger forms again)."""
        key = f"{endpoint} {model}"
        with self._lock:
            if self._found.get(key) == mode:
                return
            self._found[key] = mode
            self._write()

    def all(self) -> dict[str, ResponseMode]:
        with self._lock:
            return dict(self._found)

    def _write(self) -> None:
        if self.path is not None:
            write_private(self.path, json.dumps(self._found, indent=2, sort_keys=True))
