"""Schema bootstrap against the real Neo4j: idempotency, indexes that answer, the embedder guard."""

from __future__ import annotations

import numpy as np
import pytest
from neo4j import GraphDatabase, RoutingControl

from kg.errors import ConfigError, EmbeddingMismatchError
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from kg.store.schema import SCHEMA_VERSION, check_embedder, ensure_schema, schema_status
from tests.conftest import TestServer

W = RoutingControl.WRITE


def _unit(vec: list[float]) -> list[float]:
    arr = np.asarray(vec, dtype=np.float64)
    return (arr / np.linalg.norm(arr)).tolist()


def test_bootstrap_is_idempotent_and_records_the_embedder(store: GraphStore) -> None:
    assert not schema_status(store).installed
    first = ensure_schema(store, "test-embedder", 4)
    indexes = {r["name"] for r in store.read("meta/indexes")}
    second = ensure_schema(store, "test-embedder", 4)
    assert first == second
    assert second.installed and second.version == SCHEMA_VERSION
    assert (second.embedder, second.dimensions) == ("test-embedder", 4)
    assert {r["name"] for r in store.read("meta/indexes")} == indexes
    assert {"chunk_id", "chunk_text", "chunk_embedding", "atom_embedding", "entity_names"} <= indexes
    assert all(r["state"] == "ONLINE" for r in store.read("meta/indexes"))


def test_an_older_graphs_unsearched_vector_indexes_are_dropped(store: GraphStore) -> None:
    # A graph created before 2026-11-27 had vector indexes over entities, routes and topics, which no query
    # searches and every such node written paid an HNSW insertion for.
    unsearched = (("Entity", "entity_embedding"), ("Route", "route_embedding"), ("Topic", "topic_embedding"))
    for label, name in unsearched:
        store.query(f"CREATE VECTOR INDEX {name} IF NOT EXISTS FOR (n:{label}) ON n.embedding OPTIONS "
                    "{indexConfig: {`vector.dimensions`: 4, `vector.similarity_function`: 'cosine'}}", routing=W)
    ensure_schema(store, "test-embedder", 4)
    indexes = {r["name"] for r in store.read("meta/indexes")}
    assert not {name for _, name in unsearched} & indexes
    assert {"chunk_embedding", "atom_embedding", "fact_embedding", "factitem_embedding"} <= indexes


def test_vector_index_returns_nearest_chunks(store: GraphStore) -> None:
    ensure_schema(store, "test-embedder", 4)
    rows = [
        {"id": "a", "embedding": _unit([1, 0, 0, 0])},
        {"id": "b", "embedding": _unit([0, 1, 0, 0])},
        {"id": "c", "embedding": _unit([0.9, 0.1, 0, 0])},
    ]
    store.query("UNWIND $rows AS r CREATE (c:Chunk {id: r.id}) SET c.embedding = r.embedding", routing=W, rows=rows)
    store.write("meta/await_indexes", timeout_s=60)
    hits = store.query(
        "CALL db.index.vector.queryNodes('chunk_embedding', 2, $v) YIELD node, score RETURN node.id AS id",
        v=_unit([1, 0.05, 0, 0]),
    )
    assert [h["id"] for h in hits] == ["a", "c"]


def test_fulltext_index_finds_text_and_aliases(store: GraphStore) -> None:
    ensure_schema(store, "test-embedder", 4)
    store.query(
        "CREATE (:Chunk {id: 'x', text: 'The reactor vessel is inspected yearly.'}), "
        "(:Chunk {id: 'y', text: 'Quarterly revenue grew.'}), "
        "(:Entity {id: 'e', name: 'International Business Machines', aliases: ['IBM', 'Big Blue']})",
        routing=W,
    )
    store.write("meta/await_fulltext")
    chunks = store.query("CALL db.index.fulltext.queryNodes('chunk_text', 'reactor') YIELD node RETURN node.id AS id")
    assert [c["id"] for c in chunks] == ["x"]
    entities = store.query("CALL db.index.fulltext.queryNodes('entity_names', 'ibm') YIELD node RETURN node.id AS id")
    assert [e["id"] for e in entities] == ["e"]


def test_other_dimension_fails_naming_both(store: GraphStore) -> None:
    ensure_schema(store, "wordllama-l2-supercat", 4)
    with pytest.raises(EmbeddingMismatchError, match=r"'wordllama-l2-supercat' \(4 dimensions\).*'openai' \(8"):
        check_embedder(store, "openai", 8)
    with pytest.raises(EmbeddingMismatchError):
        ensure_schema(store, "openai", 8)
    assert schema_status(store).dimensions == 4


def test_emptied_graph_can_switch_embedder(store: GraphStore) -> None:
    ensure_schema(store, "small", 4)
    store.run_autocommit("meta/wipe")
    status = ensure_schema(store, "larger", 8)
    assert status.dimensions == 8
    dims = {r["name"]: r["dimensions"] for r in store.read("meta/vector_indexes")}
    assert dims["chunk_embedding"] == 8


def test_switching_an_emptied_graph_twice_at_once_keeps_the_vectors_of_the_new_dimension(store: GraphStore) -> None:
    # Two loads at once into an emptied graph: the first switched the index and wrote 8-d vectors while the
    # second still saw the old 4-d index. The second must switch too, not refuse the first one's vectors.
    ensure_schema(store, "small", 4)
    store.run_autocommit("meta/wipe")
    store.query("CREATE (:Chunk {id: 'new', embedding: $v})", routing=W, v=_unit([1, 0, 0, 0, 0, 0, 0, 0]))
    assert ensure_schema(store, "larger", 8).dimensions == 8
    assert {r["name"]: r["dimensions"] for r in store.read("meta/vector_indexes")}["chunk_embedding"] == 8
    # Vectors of the index's own dimension are another matter: switching back would mix them.
    store.run_autocommit("meta/wipe")  # the nodes go, the 8-d index stays
    store.query("CREATE (:Chunk {id: 'kept', embedding: $v})", routing=W, v=_unit([0, 1, 0, 0, 0, 0, 0, 0]))
    with pytest.raises(EmbeddingMismatchError, match="chunk_embedding holds 1 vectors of 8 dimensions"):
        ensure_schema(store, "small", 4)


def test_a_knowledge_base_database_is_created_or_refused_by_edition(neo4j_server: TestServer) -> None:
    # A knowledge base's database on a server the user points Strata at: Enterprise creates it, Community
    # (one database per server) refuses naming it and the way out.
    auth = (neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    with GraphDatabase.driver(neo4j_server.uri, auth=auth[1:]) as driver:
        edition = driver.execute_query("CALL dbms.components() YIELD edition RETURN edition").records[0]["edition"]
        if edition == "enterprise":
            with Neo4jGraphStore.connect(*auth, "kb-alpha") as created:
                assert created.database == "kb-alpha"
            driver.execute_query("DROP DATABASE $name IF EXISTS", {"name": "kb-alpha"}, database_="system")
        else:
            with pytest.raises(ConfigError, match=r"(?s)community.*'kb-alpha'.*STRATA_NEO4J_URI"):
                Neo4jGraphStore.connect(*auth, "kb-alpha")
    with Neo4jGraphStore.connect(*auth, "neo4j") as existing:
        assert existing.database == "neo4j"  # an existing database is used as it is
