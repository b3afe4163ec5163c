"""Recall@k and supporting-sentence metrics on known cases, and the baselines on a tiny corpus."""

from __future__ import annotations

import pytest

from kg.embeddings import HashingEmbedder
from kg.evaluation.retrieval import Bm25Baseline, DenseBaseline, Ranked, distinct_passages, passage_recall, sentence_prf
from loaders.builder import TextBuilder
from loaders.models import Sentence, SourceDocument

RANKED = [Ranked(title="A", sentences=[0]), Ranked(title="A", sentences=[1]), Ranked(title="B", sentences=[0, 1]),
          Ranked(title="C", sentences=[2]), Ranked(title="D")]


def test_duplicate_chunks_collapse_to_distinct_passages() -> None:
    assert distinct_passages(RANKED, 2) == ["A", "B"]
    assert distinct_passages(RANKED, 10) == ["A", "B", "C", "D"]


def test_passage_recall_at_k() -> None:
    assert passage_recall(RANKED, ["A", "C"], 1) == 0.5
    assert passage_recall(RANKED, ["A", "C"], 2) == 0.5
    assert passage_recall(RANKED, ["A", "C"], 3) == 1.0
    assert passage_recall(RANKED, ["Z"], 5) == 0.0
    assert passage_recall([], ["A"], 5) == 0.0


def test_sentence_precision_recall_f1() -> None:
    gold = [("A", 1), ("B", 0), ("C", 2)]
    p, r, f1 = sentence_prf(RANKED, gold, 2)  # predicted: A0, A1, B0, B1
    assert (p, r) == (0.5, pytest.approx(2 / 3))
    assert f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert sentence_prf([], gold, 2) == (0.0, 0.0, 0.0)


def _doc(title: str, text: str) -> SourceDocument:
    builder = TextBuilder(title)
    builder.add_block(text)
    doc = builder.finish(source=f"t:{title}", format="corpus", sha256=title)
    doc.sentences = [Sentence(index=0, char_start=0, char_end=len(text))]
    return doc


def test_baselines_rank_whole_passages() -> None:
    docs = [_doc("Elbe", "The Elbe flows through Hamburg."), _doc("Hudson", "The Hudson flows past Newburgh.")]
    assert Bm25Baseline(docs).search("Which river flows through Hamburg?", 2)[0].title == "Elbe"
    dense = DenseBaseline(docs, HashingEmbedder(dimensions=64)).search("Hudson Newburgh", 1)
    assert dense == [Ranked(title="Hudson", sentences=[0])]
    assert Bm25Baseline(docs).search("the of", 2) == []
