"""The batched writer's pipeline (the next group is prepared while one is at the server) against the real
Neo4j, and the rows it builds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kg.app.bench.corpus import write_corpus
from kg.layers.corpus.ingest import prepare_structural
from kg.layers.corpus.writer import DocumentWriter, PreparedDocument, _covered, document_groups
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from loaders import load_path
from loaders.models import Chunk, Sentence


def passages(tmp_path: Path, n: int) -> list[PreparedDocument]:
    return [prepare_structural(doc, 256, 32) for doc in load_path(write_corpus(tmp_path / "c.json", n))]


def stored(store: GraphStore) -> int:
    return int(store.query("MATCH (d:Document) RETURN count(d) AS n")[0]["n"])


def test_groups_are_taken_one_ahead_of_the_server_and_all_written(tmp_path: Path, store: GraphStore) -> None:
    ensure_schema(store, "hash", 8)
    docs = passages(tmp_path, 60)
    groups = list(document_groups(docs, 10))
    assert [len(g) for g in groups] == [10] * 6 and [d for g in groups for d in g] == docs
    committed_when_taken: list[int] = []

    def lazily() -> Iterator[list[PreparedDocument]]:
        for group in groups:
            committed_when_taken.append(stored(store))
            yield group

    outcomes = DocumentWriter(store).write_many(lazily())
    assert [o.document_id for o in outcomes] == [d.id for d in docs]
    assert {o.status for o in outcomes} == {"loaded"} and stored(store) == 60
    # When group k is taken, every group before k - 1 has committed: never more than one group ahead.
    assert all(committed >= 10 * max(0, k - 1) for k, committed in enumerate(committed_when_taken))


def test_a_failing_group_source_stops_after_the_groups_already_taken(tmp_path: Path, store: GraphStore) -> None:
    ensure_schema(store, "hash", 8)
    docs = passages(tmp_path, 30)

    def failing() -> Iterator[list[PreparedDocument]]:
        yield docs[:10]
        yield docs[10:20]
        raise RuntimeError("the embedder went away")

    with pytest.raises(RuntimeError, match="embedder went away"):
        DocumentWriter(store).write_many(failing())
    ids = {r["id"] for r in store.query("MATCH (d:Document) RETURN d.id AS id")}
    assert ids == {d.id for d in docs[:20]}  # whole groups, each committed or not at all


def test_covered_sentences_match_the_definition() -> None:
    # Sentences given out of order, some crossing a chunk boundary, one outside every chunk.
    spans = [(40, 55), (0, 10), (10, 25), (25, 45), (60, 70), (90, 99)]
    sentences = [Sentence(index=n, char_start=a, char_end=b) for n, (a, b) in enumerate(spans)]
    chunks = [Chunk(id=f"c{i}", document_id="d", section_key="0", order=i, text="x", page=None, char_start=a,
                    char_end=b, tokens=1) for i, (a, b) in enumerate([(0, 30), (20, 60), (50, 80), (80, 85)])]
    expected = [[n for n, s in enumerate(sentences) if s.char_start >= c.char_start and s.char_end <= c.char_end]
                for c in chunks]
    assert _covered(chunks, sentences) == expected == [[1, 2], [0, 3], [4], []]
