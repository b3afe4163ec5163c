"""A throwaway local Neo4j: its own free ports and a temporary data folder, removed afterwards.

Benchmarks and ``strata eval`` run in one so they never mix with, or alter, a user's knowledge base.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kg.provisioning import Endpoint
from kg.provisioning.local import LocalNeo4j
from kg.settings import LocalServerSettings, Settings, free_port

__all__ = ["throwaway_server"]


@contextmanager
def throwaway_server(settings: Settings, *, heap: str = "2g", pagecache: str = "1g") -> Iterator[Endpoint]:
    home = Path(tempfile.mkdtemp(prefix="strata-throwaway-"))
    server = LocalNeo4j(LocalServerSettings(
        home=home, cache_dir=settings.cache_dir, bolt_port=free_port(), http_port=free_port(),
        heap=heap, pagecache=pagecache,
    ))
    try:
        info = server.start()
        yield Endpoint(info.bolt_uri, info.user, info.password, None, "local", info.browser_url, True)
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
