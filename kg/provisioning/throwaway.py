"""A throwaway local Neo4j: its own free ports and a temporary data folder, removed afterwards.

Benchmarks and ``strata eval`` run in one so they never mix with, or alter, a user's knowledge base. Its
folder names the process that owns it (``owner.pid``): a process killed before its cleanup could run (SIGKILL,
a crash; the CLI turns SIGTERM and SIGHUP into a normal exit) leaves its server running, and the next throwaway
server started on this machine stops and removes every one whose owner is gone.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kg.provisioning import Endpoint
from kg.provisioning.local import LocalNeo4j, ServerInfo, stop_server
from kg.settings import Settings, free_port
from kg.shared.processes import alive

__all__ = ["reap_orphans", "throwaway_local_server", "throwaway_server"]

log = logging.getLogger(__name__)

_PREFIX = "strata-throwaway-"
_OWNER = "owner.pid"


def reap_orphans(root: Path | None = None) -> list[Path]:
    """Stop and remove the throwaway servers under ``root`` (the temp folder) whose owning process is gone;
    the folders removed. A folder without a readable owner (still being set up, or not Strata's) is left."""
    reaped: list[Path] = []
    for home in Path(root or tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        try:
            owner = int((home / _OWNER).read_text().strip())
        except (OSError, ValueError):
            continue
        if alive(owner):
            continue
        stopped = stop_server(home, timeout_s=30.0)
        shutil.rmtree(home, ignore_errors=True)
        log.warning("removed an orphaned throwaway Neo4j", extra={"home": str(home), "owner": owner,
                                                                  "was_running": stopped})
        reaped.append(home)
    return reaped


@contextmanager
def throwaway_local_server(settings: Settings, *, heap: str | None = "2g", pagecache: str | None = "1g",
                           start_timeout_s: float | None = None) -> Iterator[tuple[LocalNeo4j, ServerInfo]]:
    """A started throwaway server and how to reach it (its pid included), stopped and removed on exit. ``None``
    for ``heap``, ``pagecache`` or ``start_timeout_s`` takes the knowledge base's own setting (a benchmark sized
    as a user's server would be)."""
    reap_orphans()
    home = Path(tempfile.mkdtemp(prefix=_PREFIX))
    (home / _OWNER).write_text(str(os.getpid()))
    server = LocalNeo4j(settings.local.another_server(home, bolt_port=free_port(), http_port=free_port(), heap=heap,
                                                      pagecache=pagecache, start_timeout_s=start_timeout_s))
    try:
        info = server.start()
        try:
            yield server, info
        except BaseException as exc:
            # A server that died under its user surfaces as a refused connection; its log says why.
            if info.pid is not None and not alive(info.pid):
                exc.add_note(f"the throwaway Neo4j (pid {info.pid}) had exited. Log tail:\n{server.log_tail()}")
            raise
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


@contextmanager
def throwaway_server(settings: Settings, *, heap: str = "2g", pagecache: str = "1g") -> Iterator[Endpoint]:
    """A throwaway server's endpoint (see :func:`throwaway_local_server`)."""
    with throwaway_local_server(settings, heap=heap, pagecache=pagecache) as (_, info):
        yield Endpoint(info.bolt_uri, info.user, info.password, None, "local", info.browser_url, True)
