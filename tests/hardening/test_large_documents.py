"""A document larger than one write group is written, replaced and deleted in bounded transactions (a batch
of chunks each), and retrieval sees the whole of a version or none of it: an interrupted write leaves no
visible chunk, and the next load finishes it with the graph a clean build gives."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from kg.embeddings import HashingEmbedder
from kg.errors import EmbeddingError
from kg.layers.corpus.ingest import Ingestor
from kg.layers.distilled import distill
from kg.layers.resource.documents import delete_documents
from kg.llm import OfflineLLM
from kg.shared.ids import document_id
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from kg.testing import FailingStore
from tests.hardening.graphs import PEOPLE, SITES, fingerprint

pytestmark = [pytest.mark.neo4j]
EMBEDDER = HashingEmbedder(dimensions=64)
GROUP = 12  # chunks above which a document is written in several transactions (the default is 2,000)


def write_report(path: Path, edition: int, paragraphs: int = 90) -> Path:
    parts = [f"# Maintenance log, edition {edition}\n"]
    for p in range(paragraphs):
        if p % 30 == 0:
            parts.append(f"## Part {p // 30}\n")
        site, person = SITES[p % len(SITES)], PEOPLE[(p + edition) % len(PEOPLE)]
        parts.append(f"{person} inspected turbine {p} at Site {site} in {2000 + p + edition}. The gearbox showed "
                     f"{p % 7} cracks; Northwind Service replaced {edition + p % 3} bearings.\n")
    path.write_text("\n".join(parts), "utf-8")
    return path


def ingestor(store: GraphStore, group: int) -> Ingestor:
    return Ingestor(store, EMBEDDER, batch_size=8, chunk_tokens=40, chunk_overlap=5, group_chunks=group)


def build(store: GraphStore, path: Path, group: int) -> dict[str, Any]:
    report = ingestor(store, group).load([path])
    assert report.failed == 0, report.files
    distill(store, EMBEDDER, OfflineLLM(), layers=["atoms", "triples", "tables"], batch_size=8)
    return fingerprint(store)


def count(store: GraphStore, query: str, **params: Any) -> int:
    return int(store.query(query, **params)[0]["n"])


@pytest.fixture
def kb(store: GraphStore) -> GraphStore:
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    return store


def test_a_large_document_written_in_batches_is_the_graph_one_transaction_writes(tmp_path: Path,
                                                                                 kb: GraphStore) -> None:
    path = write_report(tmp_path / "log.md", 1)
    whole = build(kb, path, group=10_000)
    chunks = len(whole["chunks"])
    assert chunks > 3 * GROUP  # several chunk batches, so the staged path really splits it
    kb.run_autocommit("meta/wipe")
    ensure_schema(kb, EMBEDDER.name, EMBEDDER.dimensions)
    assert build(kb, path, group=GROUP) == whole
    assert count(kb, "MATCH (n:HiddenChunk) RETURN count(n) AS n") == 0
    assert count(kb, "MATCH (d:Document) WHERE d.loading IS NOT NULL OR d.deleting IS NOT NULL "
                     "RETURN count(d) AS n") == 0


def test_a_large_document_embedded_a_batch_at_a_time_gets_the_vectors_of_one_write(tmp_path: Path,
                                                                                  kb: GraphStore) -> None:
    """The staged path embeds as it writes and sets the centroids at the reveal: the same vectors on every
    chunk, section and document as a document embedded whole and written in one transaction."""
    path = write_report(tmp_path / "log.md", 1)

    def vectors() -> dict[str, list[float]]:
        rows = kb.query("MATCH (n) WHERE (n:Chunk OR n:Section OR n:Document) AND n.embedding IS NOT NULL "
                        "RETURN n.id AS id, labels(n)[0] AS label, n.embedding AS v")
        return {f"{r['label']}:{r['id']}": r["v"] for r in rows}

    assert ingestor(kb, 10_000).load([path]).failed == 0
    whole = vectors()
    kb.run_autocommit("meta/wipe")
    ensure_schema(kb, EMBEDDER.name, EMBEDDER.dimensions)
    assert ingestor(kb, GROUP).load([path]).failed == 0
    staged = vectors()
    assert {k.split(":")[0] for k in whole} == {"Chunk", "Section", "Document"}
    assert staged.keys() == whole.keys()
    assert all(np.allclose(staged[k], whole[k], atol=1e-6) for k in whole)


class _EmbedderFailingAt(HashingEmbedder):
    def __init__(self, call: int) -> None:
        super().__init__(dimensions=EMBEDDER.dimensions)
        self.name, self.calls, self.failing = EMBEDDER.name, 0, call

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        if self.calls == self.failing:
            raise EmbeddingError("injected embedding fault")
        return super().embed(texts)


def test_an_embedding_failure_between_batches_fails_the_document_and_leaves_nothing_of_it(tmp_path: Path,
                                                                                       kb: GraphStore) -> None:
    path = write_report(tmp_path / "log.md", 1)
    embedder = _EmbedderFailingAt(3)  # two batches are written, the third is never embedded
    report = Ingestor(kb, embedder, batch_size=8, chunk_tokens=40, chunk_overlap=5, group_chunks=GROUP).load([path])
    assert embedder.calls == 3
    [entry] = report.files
    assert entry.status == "failed" and "injected embedding fault" in (entry.error or "")
    assert count(kb, "MATCH (n) WHERE NOT n:StrataMeta RETURN count(n) AS n") == 0
    assert ingestor(kb, GROUP).load([path]).failed == 0  # and the next load writes it whole


def test_an_interrupted_large_write_shows_nothing_and_the_next_load_finishes_it(tmp_path: Path,
                                                                               kb: GraphStore) -> None:
    path = write_report(tmp_path / "log.md", 1)
    clean = build(kb, path, group=GROUP)
    kb.run_autocommit("meta/wipe")
    ensure_schema(kb, EMBEDDER.name, EMBEDDER.dimensions)
    seen = itertools.count()
    # The server goes away at the third chunk batch: two batches are written, the rest is not.
    failing = FailingStore(kb, fail_on=lambda name: name == "graph/create_hidden_chunks" and next(seen) >= 2,
                           times=None)
    with pytest.raises(Exception, match="injected fault"):
        ingestor(failing, GROUP).load([path])
    doc = document_id(str(path.resolve()))
    assert count(kb, "MATCH (c:HiddenChunk {document_id: $d}) RETURN count(c) AS n", d=doc) > 0
    assert count(kb, "MATCH (c:Chunk) RETURN count(c) AS n") == 0  # nothing of the half-written version shows
    assert count(kb, "CALL db.index.fulltext.queryNodes('chunk_text', 'turbine') YIELD node RETURN count(*) AS n") == 0
    assert build(kb, path, group=GROUP) == clean


def test_a_large_document_is_replaced_and_deleted_in_batches(tmp_path: Path, kb: GraphStore) -> None:
    path = tmp_path / "log.md"
    build(kb, write_report(path, 1), group=GROUP)
    edited = build(kb, write_report(path, 2), group=GROUP)  # the old version, distilled, goes in batches
    kb.run_autocommit("meta/wipe")
    ensure_schema(kb, EMBEDDER.name, EMBEDDER.dimensions)
    assert build(kb, write_report(path, 2), group=GROUP) == edited  # as if the first edition never was
    doc = document_id(str(path.resolve()))
    delete_documents(kb, [doc], batch=7, atomic_chunks=0)
    assert count(kb, "MATCH (n) WHERE NOT n:StrataMeta RETURN count(n) AS n") == 0


def _edit(path: Path) -> None:
    """A paragraph inserted at the top of a part, one reworded, one dropped: most chunks keep their text."""
    lines = path.read_text("utf-8").split("\n")
    part = lines.index("## Part 1")
    lines.insert(part + 1, "Greta Lund audited the whole fleet in 2031 and found every log in order.\n")
    lines[3] = lines[3].replace("The gearbox showed", "The gearbox still showed")
    del lines[-8]
    path.write_text("\n".join(lines), "utf-8")


def _atoms(store: GraphStore) -> dict[str, list[str]]:
    return {r["chunk"]: sorted(r["ids"]) for r in store.query(
        "MATCH (a:Atom) RETURN a.chunk_id AS chunk, collect(elementId(a)) AS ids")}


def _built_then_edited(kb: GraphStore, tmp_path: Path) -> tuple[Path, dict[str, list[str]]]:
    """A large document loaded and distilled, then edited on disk; with the atoms it had, by chunk."""
    path = write_report(tmp_path / "log.md", 1)
    build(kb, path, group=GROUP)
    before = _atoms(kb)
    _edit(path)
    return path, before


def _assert_distils_to_a_clean_build(kb: GraphStore, path: Path) -> None:
    distill(kb, EMBEDDER, OfflineLLM(), layers=["atoms", "triples", "tables"], batch_size=8)
    replaced = fingerprint(kb)
    kb.run_autocommit("meta/wipe")
    ensure_schema(kb, EMBEDDER.name, EMBEDDER.dimensions)
    assert build(kb, path, group=GROUP) == replaced  # the graph a clean build of the edited file gives


def test_a_large_documents_replacement_keeps_what_its_unchanged_chunks_were_distilled_into(tmp_path: Path,
                                                                                          kb: GraphStore) -> None:
    path, before = _built_then_edited(kb, tmp_path)
    [entry] = ingestor(kb, GROUP).load([path]).files
    ids = {r["id"] for r in kb.query("MATCH (c:Chunk) RETURN c.id AS id")}
    kept = ids & before.keys()
    assert entry.status == "replaced" and entry.kept_chunks == len(kept) and 0 < len(kept) < len(ids)
    assert _atoms(kb) == {c: before[c] for c in kept}  # the same nodes, not written again
    assert count(kb, "MATCH (c:Chunk) WHERE 'atoms' IN coalesce(c.distilled, []) RETURN count(c) AS n") == len(kept)
    _assert_distils_to_a_clean_build(kb, path)


def test_an_interrupted_large_replacement_keeps_its_kept_chunks_for_the_next_load(tmp_path: Path,
                                                                                  kb: GraphStore) -> None:
    path, before = _built_then_edited(kb, tmp_path)
    seen = itertools.count()
    failing = FailingStore(kb, fail_on=lambda name: name == "graph/create_hidden_chunks" and next(seen) >= 2,
                           times=None)
    with pytest.raises(Exception, match="injected fault"):
        ingestor(failing, GROUP).load([path])
    assert count(kb, "MATCH (c:Chunk) RETURN count(c) AS n") == 0  # neither version shows
    hidden = {r["id"] for r in kb.query("MATCH (c:HiddenChunk) RETURN c.id AS id")}
    [entry] = ingestor(kb, GROUP).load([path]).files
    ids = {r["id"] for r in kb.query("MATCH (c:Chunk) RETURN c.id AS id")}
    assert hidden < ids and hidden - before.keys()  # kept chunks, and new ones the cut-short write made
    assert entry.status == "replaced" and entry.kept_chunks == len(hidden)  # all kept by the next load
    assert _atoms(kb) == {c: before[c] for c in ids & before.keys()}
    _assert_distils_to_a_clean_build(kb, path)
