"""Masking secrets in text that may carry an endpoint's words: error messages, reports, JSON output.

An LLM or embedding endpoint's error body is copied into Strata's errors so people can see why a call
failed, and a misbehaving server may echo the request's ``Authorization`` header in it. So every boundary
where such text leaves Strata (the CLI's error line and its output, ``--json`` reports, the REST API's
responses) passes it through :func:`redact`, which masks:

* the secret values this process was configured with (:func:`remember` is called where configuration
  is read: the CLI's settings, :meth:`kg.app.client.Strata.connect`, the API's token), and
* generic shapes of secrets: ``Bearer <x>``, ``Basic <x>``, ``Authorization: <x>``, ``sk-...`` keys,
  and ``api_key=<x>``, ``password: <x>``, ``token=<x>``, ``secret=<x>`` (also JSON-quoted).

A masked value becomes ``***``. The patterns never consume a quote or a backslash, so redacting the text
of a JSON document leaves it valid JSON.

Example::

    remember(settings.llm.api_key.get_secret_value())
    redact('401: {"error": "bad header Authorization: Bearer sk-live-abc123"}')
    # '401: {"error": "bad header Authorization: Bearer ***"}'
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, SecretStr

__all__ = ["MASK", "redact", "redact_data", "remember", "secrets_of"]

MASK = "***"
_MIN_SECRET = 6  # shorter values ("none", "x") would mask ordinary words; the patterns still catch them

_VALUE = r"[^\s\"'\\,;&<>)}\]]+"
_PATTERNS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    # Authorization: <scheme> <credentials>, or Authorization: <credentials>
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:(bearer|basic|token|digest)\s+)?" + _VALUE),
     lambda m: m.group(1) + (f"{m.group(2)} " if m.group(2) else "") + MASK),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{4,}"), r"\1 " + MASK),
    (re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{6,}"), r"\1-" + MASK),
    (re.compile(r"(?i)\b((?:x-)?api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|token|secret|client[_-]?secret"
                r"|password|passwd|pwd)([\"']?\s*[:=]\s*[\"']?)" + _VALUE), r"\1\2" + MASK),
)

_lock = threading.Lock()
_secrets: set[str] = set()


def remember(*values: str | None) -> None:
    """Add secret values (an API key, a password, a token) that :func:`redact` masks wherever they appear."""
    with _lock:
        _secrets.update(v for v in values if v and len(v) >= _MIN_SECRET)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with the remembered secrets, ``secrets`` and the generic secret shapes masked."""
    with _lock:
        known = sorted({*_secrets, *(s for s in secrets if s and len(s) >= _MIN_SECRET)}, key=len, reverse=True)
    for value in known:
        if value in text:
            text = text.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact_data(data: Any) -> Any:
    """A copy of JSON-like ``data`` (dicts, lists, strings) with every string redacted."""
    if isinstance(data, str):
        return redact(data)
    if isinstance(data, dict):
        return {k: redact_data(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [redact_data(v) for v in data]
    return data


def secrets_of(model: BaseModel) -> list[str]:
    """Every :class:`~pydantic.SecretStr` value in a settings model and the models it holds."""
    found: list[str] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, SecretStr):
            found.append(value.get_secret_value())
        elif isinstance(value, BaseModel):
            found += secrets_of(value)
    return found
