"""A document's pseudo-graph is built part by part (a mind map per ``PseudoGraphLayer.part_chunks`` consecutive
chunks), so a document of any size is distilled in bounded batches and never in one."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from kg.layers.corpus.ingest import Ingestor
from kg.layers.distilled import distill
from kg.layers.distilled.pseudograph import PseudoGraphLayer
from kg.llm import OfflineLLM
from kg.store.base import GraphStore
from tests.distill.conftest import EMBEDDER

PART = 4
CHUNKS = 10


@pytest.fixture
def long_document(kb: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """One Markdown document of ``CHUNKS`` chunks (a section each), with parts of ``PART`` chunks."""
    monkeypatch.setattr(PseudoGraphLayer, "part_chunks", PART)
    sections = [f"## Harbour {n}\n\nThe harbour of Port {n} opened in {1900 + n}. Its pier was built by Mason {n}."
                for n in range(CHUNKS)]
    path = tmp_path / "harbours.md"
    path.write_text("# Harbours\n\n" + "\n\n".join(sections) + "\n", "utf-8")
    Ingestor(kb, EMBEDDER, batch_size=200).load([path])
    assert kb.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"] == CHUNKS
    return str(kb.query("MATCH (d:Document) RETURN d.id AS id")[0]["id"])


def _batches(kb: GraphStore, batch_size: int, *, force: bool = False) -> list[int]:
    done: list[int] = []
    distill(kb, EMBEDDER, OfflineLLM(), layers=["pseudograph"], batch_size=batch_size, force=force,
            progress=lambda _layer, finished, _total: done.append(finished))
    return [b - a for a, b in pairwise(done)]


def _mind_maps(kb: GraphStore) -> dict[str, list[int]]:
    rows = kb.query("MATCH (t:Topic)-[:ITEM_OF]->(c:Chunk) RETURN t.id AS id, collect(c.order) AS orders")
    return {r["id"]: sorted(r["orders"]) for r in rows}


@pytest.mark.parametrize(("batch_size", "batches"), [(3, [4, 4, 2]), (8, [8, 2]), (500, [10])])
def test_a_long_documents_mind_maps_are_built_in_batches_of_whole_parts(kb: GraphStore, long_document: str,
                                                                        batch_size: int, batches: list[int]) -> None:
    assert _batches(kb, batch_size) == batches  # a part is never split, and a batch past one part is whole parts
    assert _mind_maps(kb) == {f"{long_document}:topic": [0, 1, 2, 3], f"{long_document}:p1:topic": [4, 5, 6, 7],
                              f"{long_document}:p2:topic": [8, 9]}
    # Every chunk's items hang in its part's map: under a route of the part's topic.
    rows = kb.query("MATCH (t:Topic)-[:HAS_ROUTE*]->(:Route)-[:HAS_ITEM]->(f:FactItem)-[:ITEM_OF]->(c:Chunk) "
                    "RETURN t.id AS topic, c.order AS order, count(f) AS items")
    assert sorted(r["order"] for r in rows) == list(range(CHUNKS))
    topics = [f"{long_document}:topic", f"{long_document}:p1:topic", f"{long_document}:p2:topic"]
    assert all(r["topic"] == topics[r["order"] // PART] for r in rows)
    assert kb.query("MATCH (f:FactItem) WHERE NOT ()-[:HAS_ITEM]->(f) RETURN count(f) AS n")[0]["n"] == 0


def test_a_forced_run_rewrites_each_part_in_place(kb: GraphStore, long_document: str) -> None:
    count = ("MATCH (n) WHERE n:Topic OR n:Route OR n:FactItem "
             "RETURN [l IN labels(n) WHERE l IN ['Topic', 'Route', 'FactItem']][0] AS label, count(n) AS n")
    _batches(kb, 3)
    before = {r["label"]: r["n"] for r in kb.query(count)}
    assert _batches(kb, 3, force=True) == [4, 4, 2]
    assert {r["label"]: r["n"] for r in kb.query(count)} == before and before["Topic"] == 3
