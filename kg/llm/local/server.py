"""The local model server behind ``STRATA_LLM_BASE_URL=local``: llama.cpp on loopback, started by Strata.

The runtime is llama-cpp-python's OpenAI-compatible server (the ``strata-kg[local-llm]`` extra, built once
from its PyPI source with the machine's cmake and compiler), or a ``llama-server`` binary already on PATH.
State lives in ``<home>`` (``STRATA_HOME/llm``): ``server.pid``, ``server.json`` (what runs where),
``port`` (kept across starts) and ``logs/server.log``. A second start finds the running server; a stale
pid file is removed; a server that dies during start-up is reported with its log's tail and nothing is
left running.

Example::

    server = LocalLLMServer(settings.llm.local)
    info = server.start()           # assembles the model the first time
    print(info.base_url, info.alias, info.context_tokens)
    server.stop()
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

from kg.errors import LLMProvisioningError
from kg.llm.local.models import model_alias, model_file
from kg.settings import LocalLLMSettings, free_port
from kg.shared.private import PRIVATE_UMASK, private_file, write_private
from kg.shared.processes import alive, cmdline, log_tail, port_taken, terminate

__all__ = ["LocalLLMInfo", "LocalLLMServer", "Runtime", "find_runtime"]

log = logging.getLogger(__name__)

Runtime = Literal["llama-cpp-python", "llama-server"]
INSTALL_HINT = (
    "install the runtime once: `make install-llm` in a Strata checkout, or "
    "CMAKE_ARGS='-DGGML_NATIVE=OFF' pip install 'strata-kg[local-llm]' (builds llama-cpp-python from its "
    "source: about 8 minutes on one core, needs cmake and a C/C++ compiler), or put llama.cpp's "
    "`llama-server` on PATH"
)


@dataclass(frozen=True)
class LocalLLMInfo:
    """What runs: the address, the model and how it was started. Written to ``server.json``."""

    base_url: str
    alias: str
    model: str
    model_file: str
    port: int
    threads: int
    context_tokens: int
    runtime: Runtime
    pid: int
    started: bool = False
    # The server has answered once: it has loaded its model, and a later client does not wait for it to answer a
    # probe (a one-slot server busy with another client's long generation answers nothing for minutes).
    ready: bool = False

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def find_runtime() -> tuple[Runtime, list[str]] | None:
    """How to launch a server: llama-cpp-python in this interpreter, else ``llama-server`` on PATH."""
    if importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("uvicorn") is not None:
        return "llama-cpp-python", [sys.executable, "-m", "llama_cpp.server"]
    binary = shutil.which("llama-server")
    if binary is not None:
        return "llama-server", [binary]
    return None


class LocalLLMServer:
    """Start, find, describe and stop the one local model server of a Strata home."""

    def __init__(self, settings: LocalLLMSettings) -> None:
        self.settings = settings
        self.home = settings.home

    @property
    def pid_file(self) -> Path:
        return self.home / "server.pid"

    @property
    def info_file(self) -> Path:
        return self.home / "server.json"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "server.log"

    def port(self) -> int:
        """The configured port, else the one chosen free the first time and kept in ``<home>/port``."""
        if self.settings.port is not None:
            return self.settings.port
        path = self.home / "port"
        if path.is_file():
            return int(path.read_text("utf-8").strip())
        port = free_port()
        write_private(path, f"{port}\n")
        return port

    # -- inspection ----------------------------------------------------------------------------------------

    def running(self) -> LocalLLMInfo | None:
        """The running server's info, or None (a stale pid file is removed)."""
        try:
            pid = int(self.pid_file.read_text("utf-8").strip())
            info = LocalLLMInfo(**json.loads(self.info_file.read_text("utf-8")))
        except (FileNotFoundError, ValueError, TypeError):
            self._forget()
            return None
        args = cmdline(pid)
        ours = alive(pid) and (args is None or str(info.port).encode() in args)
        if not ours:
            log.info("removing stale local LLM pid file", extra={"pid": pid})
            self._forget()
            return None
        return info

    def _forget(self) -> None:
        self.pid_file.unlink(missing_ok=True)
        self.info_file.unlink(missing_ok=True)

    # -- lifecycle -----------------------------------------------------------------------------------------

    def start(self, progress: Callable[[str], None] | None = None) -> LocalLLMInfo:
        """Start the server (assembling the model file the first time), or return the running one.

        Raises LLMProvisioningError naming the fix: no runtime, port taken, model missing or corrupt, a
        server that exits or does not answer in time (with the log's tail).
        """
        say = progress or (lambda _msg: None)
        found = self.running()
        if found is not None:
            if found.model != self.settings.model:
                raise LLMProvisioningError(
                    f"the local LLM server runs {found.model!r}, not {self.settings.model!r}: "
                    "`strata llm stop` first to switch models")
            if not found.ready:
                self._wait_ready(found.pid, found.port, found.alias)
            return replace(found, started=False)
        runtime = find_runtime()
        if runtime is None:
            raise LLMProvisioningError(f"no local model runtime is installed: {INSTALL_HINT}")
        kind, launcher = runtime
        port = self.port()
        if port_taken(port):
            raise LLMProvisioningError(
                f"port {port} on 127.0.0.1 is taken by another process: stop it, or choose another port "
                "with STRATA_LOCAL_LLM_PORT")
        path = model_file(self.settings.model, cache_dir=self.settings.cache_dir, progress=say)
        alias = model_alias(self.settings.model)
        s = self.settings
        if kind == "llama-cpp-python":
            args = ["--model", str(path), "--model_alias", alias, "--host", "127.0.0.1", "--port", str(port),
                    "--n_threads", str(s.threads), "--n_threads_batch", str(s.threads), "--n_ctx",
                    str(s.context_tokens)]
        else:
            args = ["--model", str(path), "--alias", alias, "--host", "127.0.0.1", "--port", str(port),
                    "--threads", str(s.threads), "--ctx-size", str(s.context_tokens), "--parallel", "1"]
        say(f"starting {kind} on 127.0.0.1:{port} with {alias} ({s.threads} threads, context {s.context_tokens})")
        # The log quotes prompts, so documents: private, like everything the server writes.
        with private_file(self.log_file).open("ab") as out:
            proc = subprocess.Popen([*launcher, *args], stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True, umask=PRIVATE_UMASK)
        info = LocalLLMInfo(base_url=f"http://127.0.0.1:{port}/v1", alias=alias, model=s.model,
                            model_file=str(path), port=port, threads=s.threads, context_tokens=s.context_tokens,
                            runtime=kind, pid=proc.pid, started=True)
        write_private(self.pid_file, f"{proc.pid}\n")
        write_private(self.info_file, json.dumps(info.to_json(), indent=2))
        try:
            self._wait_ready(proc.pid, port, alias)
        except BaseException:
            terminate(proc.pid, timeout_s=10)
            self._forget()
            raise
        info = replace(info, ready=True)
        write_private(self.info_file, json.dumps(info.to_json(), indent=2))
        return info

    def stop(self, timeout_s: float = 30.0) -> bool:
        """Stop the server; False when none was running."""
        found = self.running()
        if found is None:
            return False
        terminate(found.pid, timeout_s)
        self._forget()
        return True

    def _wait_ready(self, pid: int, port: int, alias: str) -> None:
        deadline = time.monotonic() + self.settings.start_timeout_s
        while time.monotonic() < deadline:
            if not alive(pid):
                raise LLMProvisioningError(
                    f"the local LLM server exited during start-up. Log tail:\n{self.log_tail()}")
            if _models_answer(port, alias):
                return
            time.sleep(0.25)
        raise LLMProvisioningError(
            f"the local LLM server did not answer on 127.0.0.1:{port} within {self.settings.start_timeout_s:.0f}s. "
            f"Log tail:\n{self.log_tail()}")

    def log_tail(self, lines: int = 25) -> str:
        return log_tail([self.log_file], lines)


def _models_answer(port: int, alias: str) -> bool:
    """True when ``GET /v1/models`` answers 200 (the model is loaded and the HTTP server up)."""
    url = f"http://127.0.0.1:{port}/v1/models"
    with contextlib.suppress(OSError, ValueError), urllib.request.urlopen(url, timeout=2) as response:
        return bool(response.status == 200 and alias.encode() in response.read())
    return False
