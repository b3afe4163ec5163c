"""``eval qa``'s metrics on crafted answers: evidence recall and precision (passage keys, the title fallback),
failed runs, per-type means, cost from the accounting, a separate judge, and the report read back."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kg.app.evaluation.qa import (
    EvidenceChunk,
    QACorpus,
    QAReport,
    evaluate,
    evidence_scores,
    mark_evidence,
    render_question,
)
from kg.errors import BudgetExceededError, LLMUnavailableError
from kg.llm import LLM, OfflineLLM, make_llm
from kg.retrieval.base import Hit
from kg.settings import LLMSettings
from kg.testing import ScriptedLLMServer
from loaders import load_questions
from loaders.qa import passage_key
from reasoning.types import Answer, RetrieveStep


def _record(qid: str, kind: str, question: str, answer: str, gold: list[str],
            context: dict[str, list[str]]) -> dict[str, object]:
    return {"_id": qid, "type": kind, "question": question, "answer": answer,
            "supporting_facts": [[t, 0] for t in gold], "context": [[t, s] for t, s in context.items()]}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps([
        _record("q1", "bridge", "Which river runs through Velmora?", "the Ostra", ["Velmora", "Ostra"],
                {"Velmora": ["Velmora is a town on the Ostra."], "Ostra": ["The Ostra is a river."],
                 "Brannoch": ["Brannoch is a village."]}),
        _record("q2", "comparison", "Is Kestrel older than Brannoch?", "yes", ["Kestrel", "Brannoch"],
                {"Kestrel": ["Kestrel was founded in 1884."], "Brannoch": ["Brannoch is a village."]}),
        _record("q3", "bridge", "Who founded Kestrel?", "Imre Dovan", ["Kestrel"],
                {"Kestrel": ["Kestrel was founded in 1884."]}),
    ]), "utf-8")
    return path


def _chunk(title: str, passage: str) -> EvidenceChunk:
    return EvidenceChunk(chunk_id=f"{title}:c0", title=title, passage=passage)


def test_evidence_recall_and_precision_over_distinct_passages(dataset: Path) -> None:
    q1 = load_questions(dataset)[0]
    keys = {t: passage_key(t, x) for t, x in q1.passages}
    corpus = set(keys.values())
    # Two chunks of one gold passage count once; the distractor counts against precision.
    evidence = mark_evidence(q1, [_chunk("Velmora", keys["Velmora"]), _chunk("Velmora", keys["Velmora"]),
                                  _chunk("Brannoch", keys["Brannoch"])], corpus)
    assert [c.gold for c in evidence] == [keys["Velmora"], keys["Velmora"], None]
    assert evidence_scores(q1, evidence) == (0.5, 0.5)
    both = mark_evidence(q1, [_chunk("Ostra", keys["Ostra"]), _chunk("Velmora", keys["Velmora"])], corpus)
    assert evidence_scores(q1, both) == (1.0, 1.0)
    assert evidence_scores(q1, []) == (0.0, None)  # nothing given: nothing found, precision undefined
    no_gold = q1.model_copy(update={"gold_passages": []})
    assert evidence_scores(no_gold, both) == (None, None)  # an unanswerable question is not scored


def test_a_gold_passage_missing_from_the_corpus_is_matched_by_title(dataset: Path) -> None:
    q1 = load_questions(dataset)[0]
    keys = {t: passage_key(t, x) for t, x in q1.passages}
    # The corpus words "Ostra" differently (another key): its chunk is found by title. "Velmora" is in the
    # corpus, so a chunk of another passage that shares its title is not taken for it.
    corpus = {keys["Velmora"], keys["Brannoch"], "ostra-reworded"}
    evidence = mark_evidence(q1, [_chunk("Ostra", "ostra-reworded"), _chunk("Velmora", "another-velmora")], corpus)
    assert [c.gold for c in evidence] == [keys["Ostra"], None]
    assert evidence_scores(q1, evidence) == (0.5, 0.5)


def test_the_protocol_follows_the_corpus_option(dataset: Path, tmp_path: Path) -> None:
    sample = QACorpus.of(dataset, limit=2)
    assert sample.protocol == "question-paragraphs" and sample.source is None
    assert {d.title for d in sample.documents} == {"Velmora", "Ostra", "Brannoch", "Kestrel"}  # q1, q2 only
    corpus_file = tmp_path / "corpus.json"
    corpus_file.write_text(json.dumps([{"title": "Ostra", "text": "The Ostra is a river."}]), "utf-8")
    full = QACorpus.of(dataset, corpus_file, limit=2)
    assert full.protocol == "corpus" and full.source == str(corpus_file)
    assert set(full.passages.values()) == {passage_key("Ostra", "The Ostra is a river.")}


def _answers(corpus: QACorpus, llm: LLM, replies: dict[tuple[str, str], tuple[str, list[str]]],
             failing: dict[tuple[str, str], Exception]) -> Callable[[str, str], Answer]:
    """An answer function of crafted answers: ``(method, question) -> (answer, evidence titles)``; each run
    spends one 100 + 10 token call on ``llm``'s accounting per evidence title."""
    doc_of = {key: doc for doc, key in corpus.passages.items()}
    title_key = {d.title: passage_key(d.title, d.text) for d in corpus.documents}

    def answer(question: str, method: str) -> Answer:
        if (method, question) in failing:
            llm.accounting.record("answer", "m", prompt_tokens=50, completion_tokens=0)
            raise failing[(method, question)]
        text, titles = replies[(method, question)]
        for _ in titles:
            llm.accounting.record("answer", "m", prompt_tokens=100, completion_tokens=10)
        hits = [Hit(chunk_id=f"{t}:c0", document_id=doc_of[title_key[t]], title=t, char_start=0, char_end=5,
                    text=t, score=1.0) for t in titles]
        return Answer(question=question, answer=f"{text} [1]", method=method, offline=True, evidence=hits,
                      trace=[RetrieveStep(index=1, detail={"query": question, "hits": []})],
                      unsupported_citations=max(len(titles) - 1, 0), abstained=not titles)

    return answer


def test_per_method_and_per_type_means_with_a_failed_run(dataset: Path) -> None:
    questions = load_questions(dataset)
    corpus = QACorpus.of(dataset)
    llm = OfflineLLM()
    q1, q2, q3 = (q.question for q in questions)
    replies = {
        ("a", q1): ("Ostra", ["Velmora", "Ostra"]),  # EM 1, evidence 2/2, precision 1
        ("a", q2): ("no", ["Kestrel", "Velmora"]),  # EM 0, evidence 1/2, precision 1/2
        ("a", q3): ("Imre Dovan", []),  # EM 1, abstained, no evidence: recall 0
        ("b", q1): ("Velmora", ["Brannoch"]),  # EM 0, recall 0, precision 0
        ("b", q3): ("Imre", ["Kestrel"]),  # F1 2/3, recall 1
    }
    failing: dict[tuple[str, str], Exception] = {("b", q2): LLMUnavailableError("endpoint kept timing out")}
    seen: list[str] = []
    report = evaluate(questions, ["a", "b"], _answers(corpus, llm, replies, failing), dataset="tiny",
                      corpus=corpus, llm=llm, progress=lambda r: seen.append(f"{r.method}/{r.id}"))
    assert seen == ["a/q1", "a/q2", "a/q3", "b/q1", "b/q2", "b/q3"]
    a, b = report.results["a"], report.results["b"]
    assert (a.em, a.failed, a.abstained) == (pytest.approx(2 / 3, abs=1e-4), 0.0, pytest.approx(1 / 3, abs=1e-4))
    assert a.evidence_recall == pytest.approx((1 + 0.5 + 0) / 3, abs=1e-4)
    assert a.evidence_precision == pytest.approx((1 + 0.5) / 2, abs=1e-4)  # q3 gave no evidence: not scored
    assert a.llm_calls_per_question == pytest.approx(4 / 3, abs=1e-4)
    assert (a.prompt_tokens_per_question, a.completion_tokens_per_question) == (pytest.approx(400 / 3, abs=1e-3),
                                                                                pytest.approx(40 / 3, abs=1e-3))
    assert a.tokens_per_question == pytest.approx(440 / 3, abs=1e-3)
    assert a.unsupported_citations == pytest.approx((1 + 1 + 0) / 3, abs=1e-4)
    assert a.accuracy is None and a.seconds_per_question >= 0.0
    # The failed run scores zero, is counted, keeps its reason and its cost, and b's other questions ran.
    assert b.failed == pytest.approx(1 / 3, abs=1e-4) and b.em == 0.0
    assert b.f1 == pytest.approx((0 + 0 + 2 / 3) / 3, abs=1e-4)
    assert b.evidence_recall == pytest.approx((0 + 0 + 1) / 3, abs=1e-4)
    failed = report.records("q2")[1]
    assert failed.method == "b" and failed.failed == "LLMUnavailableError: endpoint kept timing out"
    assert failed.prompt_tokens == 50 and failed.evidence_precision is None and failed.prediction == ""
    assert set(a.by_type) == {"bridge", "comparison"}
    bridge, comparison = a.by_type["bridge"], a.by_type["comparison"]
    assert (bridge.questions, bridge.em, bridge.evidence_recall) == (2, 1.0, 0.5)
    assert (comparison.questions, comparison.em, comparison.evidence_recall) == (1, 0.0, 0.5)
    assert b.by_type["comparison"].failed == 1.0 and b.by_type["bridge"].failed == 0.0
    assert report.protocol == "question-paragraphs" and report.n_passages == 4 and report.judge is None


def test_a_budget_stop_ends_the_evaluation(dataset: Path) -> None:
    questions = load_questions(dataset)
    corpus = QACorpus.of(dataset)
    failing: dict[tuple[str, str], Exception] = {("a", questions[0].question): BudgetExceededError("budget")}
    with pytest.raises(BudgetExceededError):
        evaluate(questions, ["a"], _answers(corpus, OfflineLLM(), {}, failing), dataset="tiny", corpus=corpus,
                 llm=OfflineLLM())


@pytest.fixture
def judge_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


def test_a_separate_judge_scores_accuracy_and_reports_its_own_usage(dataset: Path,
                                                                    judge_server: ScriptedLLMServer) -> None:
    questions = load_questions(dataset)[:2]
    corpus = QACorpus.of(dataset, limit=2)
    judge_server.script("judge", {"score": 1.0, "correct": True}, {"score": 0.0, "correct": False})
    settings = LLMSettings(base_url=judge_server.base_url, model="judge-model", timeout_s=10.0, max_retries=0)
    llm = OfflineLLM()  # the answering model: offline, yet its answers are judged
    with make_llm(settings, cache_dir=None) as judge_llm:
        replies = {("a", questions[0].question): ("Ostra", ["Ostra"]),
                   ("a", questions[1].question): ("no", ["Kestrel"])}
        report = evaluate(questions, ["a"], _answers(corpus, llm, replies, {}), dataset="tiny", corpus=corpus,
                          llm=llm, judge_llm=judge_llm)
    assert [r.scores.accuracy for r in report.questions] == [1.0, 0.0]
    assert report.results["a"].accuracy == 0.5
    assert report.judge is not None and report.judge.calls == 2 and report.judge.model == "judge-model"
    assert report.results["a"].llm_calls_per_question == 1.0  # the judge's calls are not the method's
    sent = judge_server.requests[0].body["messages"][-1]["content"]
    assert "Velmora" in sent and "Ostra" in sent  # the question and the gold answer went to the judge


def test_the_report_reads_back_and_shows_one_question(dataset: Path, tmp_path: Path) -> None:
    questions = load_questions(dataset)
    corpus = QACorpus.of(dataset)
    llm = OfflineLLM()
    replies = {("a", q.question): ("Ostra", ["Ostra", "Brannoch"]) for q in questions}
    report = evaluate(questions, ["a"], _answers(corpus, llm, replies, {}), dataset="tiny", corpus=corpus, llm=llm)
    path = tmp_path / "qa.json"
    path.write_text(json.dumps(report.model_dump(mode="json")), "utf-8")
    back = QAReport.read(path)
    assert back == report and back.questions[0].trace[0].kind == "retrieve"
    shown = render_question(back.records("q1"))
    assert "Which river runs through Velmora?" in shown and "'Ostra'" in shown
    assert "* Ostra (Ostra:c0)" in shown and "  Brannoch (Brannoch:c0)" in shown  # gold marked, distractor not
    assert "1. retrieve:" in shown
    table = back.table().splitlines()
    assert table[1].startswith("a ") and {table[2].split()[0], table[3].split()[0]} == {"bridge", "comparison"}


def test_the_short_answer_is_scored_and_the_prose_kept(dataset: Path) -> None:
    questions = load_questions(dataset)[:1]
    corpus = QACorpus.of(dataset, limit=1)
    prose = f"It was {questions[0].answers[0]}, as the source says."

    def answer(question: str, method: str) -> Answer:
        return Answer(question=question, answer=f"{prose} [1]", method=method, offline=False,
                      short_answer=questions[0].answers[0])

    report = evaluate(questions, ["a"], answer, dataset="tiny", corpus=corpus, llm=OfflineLLM())
    record = report.questions[0]
    assert record.prediction == questions[0].answers[0] and record.scores.em == 1.0
    assert record.answer == prose
