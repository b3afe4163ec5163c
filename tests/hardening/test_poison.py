"""No input can poison a knowledge base: very long tokens stay within Lucene's limits, a document whose
linking fails fails alone, and a query Neo4j rejects is never reported as Neo4j being unavailable."""

from __future__ import annotations

from pathlib import Path

from neo4j import RoutingControl

from kg.errors import QueryError
from kg.layers.corpus.ingest import Ingestor
from kg.retrieval import make_retriever
from kg.store.base import GraphStore
from kg.store.lucene import MAX_CLAUSES, MAX_TERM_CHARS, lucene_query, name_query
from kg.testing import FailingStore
from loaders.chunking import MAX_WORD_CHARS
from tests.hardening.conftest import EMBEDDER

METHODS = ("strata", "chunk", "fulltext", "hybrid", "multigrain", "kg2rag", "tags")


def test_queries_stay_within_lucene_limits() -> None:
    hexes = "Checksum: " + "DEADBEEF0123" * 25000
    assert name_query(hexes) == "checksum"
    assert lucene_query("A" * 3_000_000) == ""
    cjk = lucene_query(" ".join(["北京上海广州深圳" * 20] * 50))
    assert len(cjk) <= MAX_CLAUSES and all(len(t) <= MAX_TERM_CHARS for t in cjk.split())
    assert lucene_query("Who wrote C++ (1985)?") == "wrote c 1985"


def write_bad_and_good(root: Path) -> tuple[Path, Path]:
    bad, good = root / "bad", root / "good"
    bad.mkdir()
    good.mkdir()
    (bad / "hex.txt").write_text("Checksum: " + "DEADBEEF0123" * 25000 + "\n", "utf-8")
    (bad / "aaa.txt").write_text("A" * 3_000_000, "utf-8")
    (good / "minutes.md").write_text("# Board Minutes\n\nThe Board of Northwind approved the budget.\n", "utf-8")
    (good / "notes.md").write_text("# Site Notes\n\nThe Board Minutes name Paris as the venue.\n", "utf-8")
    return bad, good


def test_very_long_tokens_load_and_later_loads_are_unaffected(tmp_path: Path, ingestor: Ingestor,
                                                               store: GraphStore) -> None:
    bad, good = write_bad_and_good(tmp_path)
    first = ingestor.load([bad])
    assert [(Path(f.path).name, f.status, f.error) for f in first.files] == [
        ("aaa.txt", "loaded", None), ("hex.txt", "loaded", None)]
    second = ingestor.load([good])
    assert [(Path(f.path).name, f.status) for f in second.files] == [("minutes.md", "loaded"), ("notes.md", "loaded")]
    assert store.query("MATCH (:Document)-[r:REFERENCES]->(d:Document {title: 'Board Minutes'}) RETURN count(r) AS n"
                       )[0]["n"] == 1
    longest = store.query("MATCH (c:Chunk) RETURN max(size(c.text)) AS n")[0]["n"]
    assert longest <= 60 * MAX_WORD_CHARS + 60  # chunk_tokens words of at most MAX_WORD_CHARS, and spaces
    assert store.query("MATCH (d:Document) WHERE d.mentions_pending RETURN count(d) AS n")[0]["n"] == 0
    for method in METHODS:  # every retrieval that meets those chunks still answers
        hits = make_retriever(method, store, EMBEDDER).retrieve("Checksum DEADBEEF0123 AAAA Board", k=3)
        assert hits, method
    assert [f.status for f in ingestor.load([bad, good]).files] == ["unchanged"] * 4


def test_a_document_whose_linking_fails_fails_alone(tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    """A knowledge base poisoned by an earlier version (a chunk's stored name terms and a title's mention query
    over Lucene's clause limit, the document still pending) fails neither retrieval (the question's title
    links are index seeks by ``mention_key`` since 4fbb42d, not Lucene queries over name terms) nor the files
    loaded after it."""
    bad, good = write_bad_and_good(tmp_path)
    ingestor.load([bad / "hex.txt"])
    poison = " ".join(f"w{n}x" for n in range(1500))
    store.query("MATCH (c:Chunk) SET c.name_terms = $poison WITH DISTINCT c.document_id AS id "
                "MATCH (d:Document {id: id}) SET d.mentions_pending = true, d.mention_query = $poison",
                poison=poison, routing=RoutingControl.WRITE)
    assert make_retriever("strata", store, EMBEDDER).retrieve("Checksum", k=3)
    report = ingestor.load([good])
    assert [(Path(f.path).name, f.status, f.error) for f in report.files] == [
        ("minutes.md", "loaded", None), ("notes.md", "loaded", None)]
    rows = store.query("MATCH (d:Document) RETURN d.source AS source, d.mentions_pending AS pending, "
                       "d.mentions_error AS error ORDER BY source")
    assert [r["pending"] for r in rows] == [None, None, None]
    assert "TooManyClauses" in rows[0]["error"] and rows[0]["source"].endswith("hex.txt")


def test_a_file_whose_own_linking_fails_is_reported_failed_and_leaves_nothing(
        tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    _, good = write_bad_and_good(tmp_path)
    (minutes,) = ingestor.load([good / "minutes.md"]).files
    assert (minutes.status, minutes.error) == ("loaded", None)
    # Neo4j refuses the title-links query of notes.md (whose mentions of "Board Minutes" it would link):
    # as a query too large for Lucene would be, before name_query bounded the terms.
    refused = QueryError("Neo4j rejected the query: Neo.ClientError.Procedure.ProcedureCallFailed: Failed to "
                         "invoke procedure `db.index.fulltext.queryNodes`: TooManyClauses: maxClauseCount is 1024")
    failing = FailingStore(store, "graph/link_mentions", times=None, error=refused)
    report = Ingestor(failing, EMBEDDER, batch_size=50, chunk_tokens=60, chunk_overlap=10).load([good / "notes.md"])
    assert failing.failures == 2  # the batch of pending documents, then the document alone
    statuses = {Path(f.path).name: (f.status, f.error) for f in report.files}
    status, error = statuses["notes.md"]
    assert status == "failed" and error is not None and "TooManyClauses" in error and "title links" in error
    assert [r["title"] for r in store.query("MATCH (d:Document) RETURN d.title AS title")] == ["Board Minutes"]
    assert store.query("MATCH (c:Chunk) RETURN collect(DISTINCT c.document_id) AS ids")[0]["ids"] == [
        minutes.document_id]  # nothing of notes.md is left
