"""Recall@k and supporting-sentence metrics on known cases, and the baselines on a tiny corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg.app.evaluation.retrieval import (
    UNTYPED,
    WARMUP_QUERIES,
    Bm25Baseline,
    DenseBaseline,
    MethodRanking,
    Ranked,
    _score,
    distinct_passages,
    gold_sentence_keys,
    passage_recall,
    question_rankings,
    question_types,
    sentence_prf,
)
from kg.app.evaluation.runner import corpus_documents
from kg.embeddings import HashingEmbedder
from loaders import load_questions
from loaders.builder import TextBuilder
from loaders.models import Sentence, SourceDocument
from loaders.qa import passage_key

RANKED = [Ranked(passage="A", sentences=[0]), Ranked(passage="A", sentences=[1]),
          Ranked(passage="B", sentences=[0, 1]), Ranked(passage="C", sentences=[2]), Ranked(passage="D")]


def test_duplicate_chunks_collapse_to_distinct_passages() -> None:
    assert distinct_passages(RANKED, 2) == ["A", "B"]
    assert distinct_passages(RANKED, 10) == ["A", "B", "C", "D"]


def test_passage_recall_at_k() -> None:
    assert passage_recall(RANKED, ["A", "C"], 1) == 0.5
    assert passage_recall(RANKED, ["A", "C"], 2) == 0.5
    assert passage_recall(RANKED, ["A", "C"], 3) == 1.0
    assert passage_recall(RANKED, ["Z"], 5) == 0.0
    assert passage_recall([], ["A"], 5) == 0.0
    assert passage_recall(RANKED, [], 5) is None  # no gold: not scored, rather than a free 1.0


def test_sentence_precision_recall_f1() -> None:
    gold = [("A", 1), ("B", 0), ("C", 2)]
    p, r, f1 = sentence_prf(RANKED, gold, 2)  # predicted: A0, A1, B0, B1
    assert (p, r) == (0.5, pytest.approx(2 / 3))
    assert f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert sentence_prf([], gold, 2) == (0.0, 0.0, 0.0)


ELBE = ("Elbe", "The Elbe flows through Hamburg.")


def _doc(title: str, text: str) -> SourceDocument:
    builder = TextBuilder(title)
    builder.add_block(text)
    doc = builder.finish(source=f"t:{title}", format="corpus", sha256=title)
    doc.sentences = [Sentence(index=0, char_start=0, char_end=len(text))]
    return doc


def test_baselines_rank_whole_passages() -> None:
    docs = [_doc(*ELBE), _doc("Hudson", "The Hudson flows past Newburgh.")]
    assert Bm25Baseline(docs).search("Which river flows through Hamburg?", 2)[0].passage == passage_key(*ELBE)
    dense = DenseBaseline(docs, HashingEmbedder(dimensions=64)).search("Hudson Newburgh", 1)
    assert dense == [Ranked(passage=passage_key("Hudson", "The Hudson flows past Newburgh."), sentences=[0])]
    assert Bm25Baseline(docs).search("the of", 2) == []


def _musique(path: Path) -> Path:
    """Two questions: the first's gold is one of two passages titled "Südhof" (MuSiQue repeats titles in a
    question); the second is unanswerable, with no gold passage."""
    records = [
        {"id": "2hop__1", "question": "Where did Südhof win the Nobel Prize?", "answer": "Stockholm",
         "paragraphs": [
             {"idx": 0, "title": "Südhof", "paragraph_text": "Südhof received the Nobel Prize in Stockholm.",
              "is_supporting": True},
             {"idx": 1, "title": "Südhof", "paragraph_text": "Südhof was born in Göttingen.",
              "is_supporting": False},
             {"idx": 2, "title": "Malenka", "paragraph_text": "Malenka studies synapses.", "is_supporting": False},
         ]},
        {"id": "2hop__2", "question": "Where was Malenka born?", "answer": "",
         "paragraphs": [{"idx": 0, "title": "Malenka", "paragraph_text": "Malenka studies synapses.",
                         "is_supporting": False}]},
    ]
    path.write_text(json.dumps(records), "utf-8")
    return path


def test_passages_sharing_a_title_are_told_apart(tmp_path: Path) -> None:
    path = _musique(tmp_path / "musique.json")
    question, unanswerable = load_questions(path)
    gold = passage_key("Südhof", "Südhof received the Nobel Prize in Stockholm.")
    other = passage_key("Südhof", "Südhof was born in Göttingen.")
    assert question.gold_passages == [gold] and unanswerable.gold_passages == []
    # The corpus documents of both passages exist, under keys the gold uses.
    assert {passage_key(d.title, d.text) for d in corpus_documents(path)} >= {gold, other}
    # The non-gold passage with the gold title is not a hit, and chunks of one passage collapse.
    ranked = [Ranked(passage=other), Ranked(passage=other), Ranked(passage=gold)]
    assert passage_recall(ranked, question.gold_passages, 1) == 0.0
    assert passage_recall(ranked, question.gold_passages, 2) == 1.0


def test_questions_without_gold_are_left_out_of_recall(tmp_path: Path) -> None:
    questions = load_questions(_musique(tmp_path / "musique.json"))
    miss = _score(lambda _q: [Ranked(passage="elsewhere")], questions, [1], 1).overall
    assert miss["recall@1"] == 0.0  # the unanswerable question does not add a free 1.0
    assert miss["sp_f1"] is None  # no sentence gold in MuSiQue
    assert _score(lambda _q: [], questions[1:], [1], 1).overall["recall@1"] is None


def test_each_method_is_warmed_up_before_it_is_timed(tmp_path: Path) -> None:
    questions = load_questions(_musique(tmp_path / "musique.json"))
    asked: list[str] = []
    _score(lambda q: asked.append(q) or [], questions, [1], 1)
    warmups = min(WARMUP_QUERIES, len(questions))
    assert asked == [q.question for q in questions[:warmups]] + [q.question for q in questions]


def test_sentence_gold_names_passages_not_titles() -> None:
    from loaders.qa import QAQuestion

    gold_text, other_text = "A is big. A is old.", "A is small."
    question = QAQuestion(id="q", question="?", answers=["x"], gold_titles=["A"], gold_sentences=[("A", 1)],
                          passages=[("A", gold_text), ("A", other_text)],
                          gold_passages=[passage_key("A", gold_text)])
    sentences = gold_sentence_keys(question)
    assert sentences == [(passage_key("A", gold_text), 1)]
    # Sentence 1 of the same-titled non-gold passage is not a supporting sentence.
    wrong = [Ranked(passage=passage_key("A", other_text), sentences=[1])]
    assert sentence_prf(wrong, sentences, 2) == (0.0, 0.0, 0.0)
    right = [Ranked(passage=passage_key("A", gold_text), sentences=[1])]
    assert sentence_prf(right, sentences, 2) == (1.0, 1.0, 1.0)


def test_recall_is_broken_down_per_question_type() -> None:
    from loaders.qa import QAQuestion

    def question(qid: str, kind: str | None, gold: list[str]) -> QAQuestion:
        return QAQuestion(id=qid, question=qid, answers=["x"], gold_titles=gold, gold_sentences=[], type=kind,
                          passages=[], gold_passages=gold)

    questions = [question("b1", "bridge", ["A", "B"]), question("b2", "bridge", ["C", "D"]),
                 question("c1", "comparison", ["E", "F"]), question("u1", None, ["G", "H"]),
                 question("none", "comparison", [])]
    found = {"b1": ["A", "B"], "b2": ["C", "x"], "c1": ["x", "y"], "u1": ["G", "y"], "none": ["A"]}
    scores = _score(lambda q: [Ranked(passage=p) for p in found[q]], questions, [1, 2], 2)
    assert scores.by_type == {"bridge": {"recall@1": 0.5, "recall@2": 0.75},
                              "comparison": {"recall@1": 0.0, "recall@2": 0.0},
                              UNTYPED: {"recall@1": 0.5, "recall@2": 0.5}}
    assert scores.overall["recall@2"] == pytest.approx((1 + 0.5 + 0 + 0.5) / 4)
    # The question without gold is in no type's count.
    assert question_types(questions) == {"bridge": 2, "comparison": 1, UNTYPED: 1}


def test_each_question_shows_every_methods_top_passages_and_gold_ranks(tmp_path: Path) -> None:
    path = _musique(tmp_path / "musique.json")
    questions, docs = load_questions(path), corpus_documents(path)
    gold = passage_key("Südhof", "Südhof received the Nobel Prize in Stockholm.")
    other = passage_key("Südhof", "Südhof was born in Göttingen.")
    results = {
        "found": _score(lambda _q: [Ranked(passage=other), Ranked(passage=other), Ranked(passage=gold)],
                        questions, [1, 2], 1),
        "missed": _score(lambda _q: [Ranked(passage=other), Ranked(passage="unknown")], questions, [1, 2], 1),
    }
    answerable, unanswerable = question_rankings(questions, docs, results)
    assert answerable.id == questions[0].id and answerable.gold == ["Südhof"]
    # Chunks of one passage collapse, as recall counts them: the gold passage is second, within the top max(k).
    assert answerable.methods["found"] == MethodRanking(top=["Südhof", "Südhof"], gold_ranks=[2])
    # Not in the top: no rank; a passage the corpus does not hold is shown by its key.
    assert answerable.methods["missed"] == MethodRanking(top=["Südhof", "unknown"], gold_ranks=[None])
    assert unanswerable.gold == [] and unanswerable.methods["missed"].gold_ranks == []
    # Gold ranks agree with the recall the report gives.
    assert results["found"].overall["recall@2"] == 1.0 and results["missed"].overall["recall@2"] == 0.0
