"""Fixtures of the hardening tests: an offline ingestor over the session's real Neo4j."""

from __future__ import annotations

import pytest

from kg.embeddings import HashingEmbedder
from kg.layers.corpus.ingest import Ingestor
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema

EMBEDDER = HashingEmbedder(dimensions=64)


@pytest.fixture
def ingestor(store: GraphStore) -> Ingestor:
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    return Ingestor(store, EMBEDDER, batch_size=50, chunk_tokens=60, chunk_overlap=10)


from tests.surfaces.conftest import client_for, make_kb, service  # noqa: E402,F401  (the API over real clients)
