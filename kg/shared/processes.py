"""Background servers Strata starts itself (Neo4j, the local model server): liveness, ports, stopping, logs.

>>> alive(os.getpid())
True
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

__all__ = ["alive", "await_quiet", "cmdline", "cpu_seconds", "log_tail", "port_taken", "terminate"]

QUIET_CORES = 0.2  # an idle Neo4j uses a few hundredths of a core; one Lucene merge thread uses a whole one


def alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie child of ours is reaped and counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    return True


def cmdline(pid: int) -> list[bytes] | None:
    """The command line of ``pid`` from /proc, or None when it cannot be told: no /proc (macOS), the process is
    gone, or /proc shows an empty one (a process between fork and exec, as one just started is for a moment:
    taken for a stranger, its pid file was removed as stale)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return raw.split(b"\0") if raw else None


def port_taken(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts TCP connections on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def terminate(pid: int, timeout_s: float = 60.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout_s`` if the process is still there."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def log_tail(paths: Sequence[Path], lines: int = 25) -> str:
    """The last ``lines`` of each existing log file, each headed by its path."""
    texts: list[str] = []
    for path in paths:
        if path.is_file():
            content = path.read_text("utf-8", errors="replace").splitlines()[-lines:]
            texts.append(f"--- {path}\n" + "\n".join(content))
    return "\n".join(texts) or "(no log yet)"


def cpu_seconds(process: psutil.Process) -> float:
    """The CPU ``process`` has used so far, user and system, every thread (``/proc``)."""
    times = process.cpu_times()
    return float(times.user + times.system)


def await_quiet(pid: int, *, cores: float = QUIET_CORES, window_s: float = 5.0,
                timeout_s: float = 3600.0) -> tuple[float, bool]:
    """Wait until process ``pid`` uses less than ``cores`` CPUs over ``window_s``, or ``timeout_s`` has passed:
    the seconds waited (at least one window), and whether it quietened (a process that has ended has). What a
    Neo4j does after its writes have returned is merge index segments (docs/scaling.md, "Merges the server never
    did")."""
    started = time.perf_counter()
    try:
        process = psutil.Process(pid)
        while True:
            before = cpu_seconds(process)
            time.sleep(window_s)
            used = (cpu_seconds(process) - before) / window_s
            waited = time.perf_counter() - started
            if used < cores or waited >= timeout_s:
                return waited, used < cores
    except psutil.NoSuchProcess:
        return time.perf_counter() - started, True
