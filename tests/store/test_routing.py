"""Strata on a cluster or Aura: every read is sent to a reader and every write to the writer.

The store opens its sessions with an access mode (reads: read sessions, auto-commit; writes: ``execute_query``
with write routing, managed write transactions, write sessions), and a routing driver (``neo4j://``) sends them
to the members the routing table names. Neo4j 5 single servers accept ``neo4j://`` (the routing table names the
one server for both) and refuse a write in a read session, as a cluster's readers do, so running the suite's
load, distillation, retrieval and delete through a routing driver against the session's server fails on any
write the code sends as a read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest

from kg.app.evaluation.runner import EVAL_LAYERS
from kg.errors import QueryError
from kg.layers.distilled import distill
from kg.layers.resource.documents import delete_documents
from kg.llm import OfflineLLM
from kg.retrieval import METHODS, make_retriever
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from tests.conftest import TestServer
from tests.retrieval.conftest import EMBEDDER, PASSAGES, load_passages

pytestmark = pytest.mark.neo4j

_ROUTING = {"bolt": "neo4j", "bolt+s": "neo4j+s", "bolt+ssc": "neo4j+ssc"}


def routing_uri(uri: str) -> str:
    """The same server addressed through a routing driver (``bolt://`` becomes ``neo4j://``)."""
    scheme, rest = uri.split("://", 1)
    return f"{_ROUTING.get(scheme, scheme)}://{rest}"


def test_routing_uri_keeps_the_address_and_the_encryption() -> None:
    assert routing_uri("bolt://127.0.0.1:7687") == "neo4j://127.0.0.1:7687"
    assert routing_uri("bolt+s://db.example:7687") == "neo4j+s://db.example:7687"
    assert routing_uri("neo4j+s://x.databases.neo4j.io") == "neo4j+s://x.databases.neo4j.io"


@pytest.fixture
def routed(neo4j_server: TestServer, store: GraphStore) -> Iterator[Neo4jGraphStore]:
    """The session's (emptied) database through a routing driver."""
    routed = Neo4jGraphStore.connect(routing_uri(neo4j_server.uri), neo4j_server.user, neo4j_server.password)
    assert isinstance(routed.driver, neo4j.Neo4jDriver)  # routing, not a direct bolt connection
    yield routed
    routed.close()


def test_a_write_sent_as_a_read_is_refused(routed: Neo4jGraphStore) -> None:
    """What makes the next test able to fail: the server enforces a session's access mode."""
    with pytest.raises(QueryError, match="AccessMode"):
        routed.read("meta/write", schema_version=0, embedder="probe", dimensions=1)
    routed.write("meta/write", schema_version=0, embedder="probe", dimensions=1)
    assert routed.read("meta/read")[0]["embedder"] == "probe"


def test_load_distil_retrieve_and_delete_through_a_routing_driver(routed: Neo4jGraphStore, tmp_path: Path) -> None:
    corpus = load_passages(routed, tmp_path, PASSAGES)  # schema, documents, chunks, vectors, title links
    llm = OfflineLLM()
    report = distill(routed, EMBEDDER, llm, layers=EVAL_LAYERS)
    assert report.failed == 0, report
    question = "Where was Timothy Shay Arthur born?"
    for method in METHODS:  # ppr included: its GDS catalog calls and projection are read-mode procedures
        hits = make_retriever(method, routed, EMBEDDER, llm=llm).retrieve(question, k=3)
        assert hits, method
    delete_documents(routed, [corpus.documents["Newburgh"]])
    assert "Newburgh" not in [h.title for h in make_retriever("ppr", routed, EMBEDDER).retrieve(question, k=6)]
