"""Fixtures for the user surfaces: real Strata clients (offline) over the session's Neo4j, and the API over them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from kg.app.client import Strata
from kg.app.rest import ApiSettings, KnowledgeBases, StrataService, create_app
from kg.embeddings import HashingEmbedder
from kg.llm import OfflineLLM
from kg.provisioning import Endpoint
from kg.settings import LocalServerSettings, Settings
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from kg.store.schema import ensure_schema
from tests.conftest import TestServer

EMBEDDER = HashingEmbedder(dimensions=64)


@pytest.fixture
def make_kb(store: GraphStore, neo4j_server: TestServer, tmp_path: Path) -> Iterator[Callable[[str], Strata]]:
    """A Strata client named ``kb`` over the wiped test database (settings built here, not from the env).

    Each client has its own driver, so closing it (as the API does on shutdown) leaves the session's alone.
    """
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    http = neo4j_server.local.settings.http_port if neo4j_server.local else 7474
    endpoint = Endpoint(neo4j_server.uri, neo4j_server.user, neo4j_server.password, None, "local",
                        f"http://127.0.0.1:{http}/browser/")

    def make(kb: str = "default") -> Strata:
        home = tmp_path / "home" / kb
        settings = Settings(home=home, cache_dir=tmp_path / "cache", kb=kb,
                            local=LocalServerSettings(home=home / "neo4j", cache_dir=tmp_path / "cache"),
                            batch_size=100, chunk_tokens=120, chunk_overlap=16)
        own = Neo4jGraphStore.connect(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
        opened.append(Strata(settings, own, EMBEDDER, endpoint, OfflineLLM()))
        return opened[-1]

    opened: list[Strata] = []
    yield make
    for kb in opened:
        kb.close()  # closing twice (after the API closed it) is harmless


@pytest.fixture
def service(make_kb: Callable[[str], Strata]) -> StrataService:
    return StrataService(make_kb("default"))


@pytest.fixture
def client_for(service: StrataService) -> Iterator[Callable[..., TestClient]]:
    """A TestClient over the API for ``service``'s knowledge base, with the given :class:`ApiSettings` fields."""
    opened: list[TestClient] = []

    def make(**fields: object) -> TestClient:
        client = TestClient(create_app(KnowledgeBases(lambda name: service), ApiSettings.model_validate(fields)))
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.close()
