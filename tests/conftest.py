"""One real Neo4j for the whole test session, never the user's.

Order: STRATA_TEST_NEO4J_URI (a server handed to the tests, which they wipe); else a throwaway Docker
container when an engine answers; else a throwaway local Neo4j Community 5.26 with its own free ports and
a temporary data folder (the jar cache is shared, it holds no data). STRATA_NEO4J_URI and the user's
local instance are never used. If no server can be had the session fails and says why: no silent skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg.provisioning import LocalNeo4j
from kg.provisioning.docker import docker_available
from kg.settings import LocalServerSettings, free_port
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def jar_cache_dir() -> Path:
    return Path(os.environ.get("STRATA_CACHE_DIR", Path.home() / ".cache" / "strata"))


class TestServer:
    __test__ = False

    def __init__(self, uri: str, user: str, password: str, local: LocalNeo4j | None = None) -> None:
        self.uri, self.user, self.password, self.local = uri, user, password, local


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestServer]:
    uri = os.environ.get("STRATA_TEST_NEO4J_URI")
    if uri:
        yield TestServer(uri, os.environ.get("STRATA_TEST_NEO4J_USER", "neo4j"),
                         os.environ.get("STRATA_TEST_NEO4J_PASSWORD", ""))
        return
    if docker_available():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26-community", password="strata-test-pw") as container:
            yield TestServer(container.get_connection_url(), "neo4j", "strata-test-pw")
        return
    settings = LocalServerSettings(
        home=tmp_path_factory.mktemp("neo4j-test"), cache_dir=jar_cache_dir(),
        bolt_port=free_port(), http_port=free_port(), heap="1g", pagecache="256m",
    )
    server = LocalNeo4j(settings)
    info = server.start()
    try:
        yield TestServer(info.bolt_uri, info.user, info.password, server)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def session_store(neo4j_server: TestServer) -> Iterator[GraphStore]:
    store = Neo4jGraphStore.connect(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    yield store
    store.close()


@pytest.fixture
def store(session_store: GraphStore) -> GraphStore:
    """The test server's database, emptied before the test (tests are isolated from each other)."""
    session_store.run_autocommit("meta/wipe")
    return session_store


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        raise RuntimeError(f"the shared QA samples are missing: expected {SHARED_DATA}")
    return SHARED_DATA
