"""Question-answering evaluation (PIKE-RAG 6.1, Tables 4-6), in an isolated knowledge base.

Answer metrics: EM, F1, precision and recall over SQuAD-normalised tokens, each the best over the gold
answer's aliases; accuracy by an LLM judge (task ``judge``, all aliases given at once) when a judge is
configured. Evidence metrics, on what the method put in front of the model (``Answer.evidence``): each
chunk maps back to its passage (:func:`~kg.app.evaluation.runner.passage_keys`), and over the distinct
passages, evidence recall = |gold among them| / |gold| and evidence precision = |gold among them| /
|them|. Cost: LLM calls, prompt and completion tokens and seconds per question. A run that raised counts
as failed (its reason kept) and scores zero; the other questions and methods go on.

Per method the means, and the same means per question type (``by_type``). The report keeps every
question's record (prediction, scores, evidence, cost, trace) so :func:`render_question` can show it again.

>>> score_answer("the Morning Edition [1]", ["Morning Edition"]).em
1.0
>>> round(score_answer("Morning Edition show", ["Morning Edition"]).f1, 3)
0.8
"""

from __future__ import annotations

import collections
import json
import re
import string
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from kg.app.evaluation.runner import (
    EVAL_LAYERS,
    corpus_documents,
    distill_eval_layers,
    isolated_store,
    load_corpus,
    passage_keys,
)
from kg.embeddings import Embedder
from kg.errors import BudgetExceededError, LLMError, Neo4jUnavailable, StrataError
from kg.layers.distilled import DistillReport
from kg.llm import JUDGE, LLM, JudgeVerdict, LLMReport, detect_language
from kg.settings import Settings
from kg.store.base import GraphStore
from loaders import QAQuestion, load_questions
from loaders.models import SourceDocument
from loaders.qa import passage_key
from reasoning.evidence import strip_markers
from reasoning.types import Answer, TraceStep

__all__ = [
    "AnswerScores",
    "EvidenceChunk",
    "MethodResult",
    "MethodScores",
    "QACorpus",
    "QAReport",
    "QuestionRecord",
    "best_f1",
    "evaluate",
    "evidence_scores",
    "exact_match",
    "isolated_kb",
    "judge",
    "mark_evidence",
    "method_result",
    "normalize_answer",
    "plot_report",
    "questions_of",
    "render_question",
    "score_answer",
    "summarize",
    "token_scores",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_MARKERS = re.compile(r"\[\d+\]")


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces (citation markers go)."""
    text = _MARKERS.sub(" ", text.lower())
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_scores(prediction: str, gold: str) -> tuple[float, float, float]:
    """Token-level (precision, recall, F1) after normalisation."""
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred or not ref:
        same = float(pred == ref)
        return same, same, same
    common = sum((collections.Counter(pred) & collections.Counter(ref)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    precision, recall = common / len(pred), common / len(ref)
    return precision, recall, 2 * precision * recall / (precision + recall)


class AnswerScores(BaseModel):
    em: float
    f1: float
    precision: float
    recall: float
    accuracy: float | None = None


def score_answer(prediction: str, answers: Sequence[str]) -> AnswerScores:
    """Each metric the best over the aliases (the paper's conservative scoring)."""
    if not answers:
        return AnswerScores(em=0.0, f1=0.0, precision=0.0, recall=0.0)
    tokens = [token_scores(prediction, a) for a in answers]
    return AnswerScores(em=max(exact_match(prediction, a) for a in answers), f1=max(t[2] for t in tokens),
                        precision=max(t[0] for t in tokens), recall=max(t[1] for t in tokens))


def best_f1(prediction: str, answers: Sequence[str]) -> float:
    """The answer score Algorithm 2 uses."""
    return score_answer(prediction, answers).f1


def judge(llm: LLM, question: str, answers: Sequence[str], prediction: str) -> JudgeVerdict:
    """The LLM judge's verdict (task ``judge``) with every admissible answer given at once."""
    return llm.run(JUDGE, lang=detect_language(question), question=question, reference=" | ".join(answers),
                   answer=prediction)


Protocol = Literal["question-paragraphs", "corpus"]


class QACorpus(BaseModel):
    """The passages the knowledge base is built from, and which protocol chose them.

    ``question-paragraphs`` (PIKE-RAG's reference protocol): the paragraphs of the sampled questions only,
    so a sample is affordable on a local model; ``corpus``: every passage of a corpus file.
    """

    protocol: Protocol
    source: str | None = None  # the corpus file, for the ``corpus`` protocol
    documents: list[SourceDocument]
    passages: dict[str, str]  # document id -> passage key

    @classmethod
    def of(cls, dataset: Path, corpus: Path | None = None, *, limit: int | None = None) -> QACorpus:
        docs = corpus_documents(dataset, corpus, limit=limit)
        return cls(protocol="question-paragraphs" if corpus is None else "corpus",
                   source=None if corpus is None else str(corpus), documents=docs, passages=passage_keys(docs))

    @property
    def keys(self) -> set[str]:
        """The passage keys of the corpus."""
        return set(self.passages.values())


class EvidenceChunk(BaseModel):
    """A chunk the method put in front of the model: its passage (key) and which gold passage it is, if any."""

    chunk_id: str
    title: str
    passage: str
    gold: str | None = None  # the key of the gold passage this chunk belongs to


def mark_evidence(question: QAQuestion, evidence: Sequence[EvidenceChunk],
                  corpus: Collection[str]) -> list[EvidenceChunk]:
    """``evidence`` with each chunk's gold passage set: the one with its passage key or, for a gold passage
    whose text is nowhere in the ``corpus`` (passage keys; a corpus file may word it differently), the one
    with its title."""
    titles = {passage_key(t, x): t for t, x in question.passages}
    by_title = {titles[g]: g for g in question.gold_passages if g not in corpus and g in titles}
    gold = set(question.gold_passages)
    return [c.model_copy(update={"gold": c.passage if c.passage in gold else by_title.get(c.title)})
            for c in evidence]


def evidence_scores(question: QAQuestion, evidence: Sequence[EvidenceChunk]) -> tuple[float | None, float | None]:
    """(evidence recall, evidence precision) of marked evidence (:func:`mark_evidence`) over its distinct
    passages: |gold found| / |gold|, None without gold passages (nothing to find); |gold found| / |passages
    given|, None without gold passages or without evidence."""
    if not question.gold_passages:
        return None, None
    found = {c.gold for c in evidence if c.gold is not None}
    recall = len(found) / len(set(question.gold_passages))
    distinct = {c.passage for c in evidence}
    return recall, (len(found) / len(distinct) if distinct else None)


class QuestionRecord(BaseModel):
    """One question answered by one method: what it answered, how it scored, what it saw, what it cost."""

    method: str
    id: str
    type: str | None
    question: str
    gold: list[str]
    gold_titles: list[str]
    prediction: str  # what was scored: the short answer when the method gave one, else the answer's text
    answer: str = ""  # the answer as the user reads it (cited prose)
    scores: AnswerScores
    evidence_recall: float | None
    evidence_precision: float | None
    evidence: list[EvidenceChunk] = Field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    unsupported_citations: int = 0
    abstained: bool = False
    failed: str | None = None  # why the run raised
    judge_error: str | None = None  # why the judge gave no verdict (accuracy then None)
    stop_reason: str | None = None
    trace: list[TraceStep] = Field(default_factory=list)


class MethodScores(BaseModel):
    """Means over ``questions`` questions (evidence recall and precision over those they are defined for)."""

    questions: int
    em: float
    f1: float
    precision: float
    recall: float
    accuracy: float | None
    evidence_recall: float | None
    evidence_precision: float | None
    llm_calls_per_question: float
    tokens_per_question: float
    prompt_tokens_per_question: float
    completion_tokens_per_question: float
    seconds_per_question: float
    failed: float  # share of questions whose run raised
    unsupported_citations: float  # mean per question
    abstained: float  # share of questions


class MethodResult(MethodScores):
    by_type: dict[str, MethodScores] = Field(default_factory=dict)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _mean(values: Sequence[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return _rounded(sum(defined) / len(defined)) if defined else None


def summarize(records: Sequence[QuestionRecord]) -> MethodScores:
    """The means of ``records`` (failed runs count, with zero scores)."""
    n = max(len(records), 1)

    def mean(values: Sequence[float]) -> float:
        return round(sum(values) / n, 4)

    return MethodScores(
        questions=len(records),
        em=mean([r.scores.em for r in records]), f1=mean([r.scores.f1 for r in records]),
        precision=mean([r.scores.precision for r in records]), recall=mean([r.scores.recall for r in records]),
        accuracy=_mean([r.scores.accuracy for r in records]),
        evidence_recall=_mean([r.evidence_recall for r in records]),
        evidence_precision=_mean([r.evidence_precision for r in records]),
        llm_calls_per_question=mean([r.calls for r in records]),
        tokens_per_question=mean([r.prompt_tokens + r.completion_tokens for r in records]),
        prompt_tokens_per_question=mean([r.prompt_tokens for r in records]),
        completion_tokens_per_question=mean([r.completion_tokens for r in records]),
        seconds_per_question=mean([r.seconds for r in records]),
        failed=mean([float(r.failed is not None) for r in records]),
        unsupported_citations=mean([r.unsupported_citations for r in records]),
        abstained=mean([float(r.abstained) for r in records]),
    )


UNTYPED = "untyped"


def method_result(records: Sequence[QuestionRecord]) -> MethodResult:
    """:func:`summarize` over all ``records`` and per question type (``untyped`` when the data set has none)."""
    by_type: dict[str, list[QuestionRecord]] = {}
    for r in records:
        by_type.setdefault(r.type or UNTYPED, []).append(r)
    return MethodResult(**summarize(records).model_dump(),
                        by_type={kind: summarize(rs) for kind, rs in sorted(by_type.items())})


class QAReport(BaseModel):
    dataset: str
    protocol: Protocol
    corpus: str | None = None
    n_questions: int
    n_passages: int
    llm: LLMReport  # the job's model and usage (loading, distillation, answers, and judging by the same model)
    distillation: DistillReport | None = None  # how the knowledge base's distilled layers were built, at what cost
    judge: LLMReport | None = None  # a judge model of its own, when one was configured
    results: dict[str, MethodResult]
    questions: list[QuestionRecord] = Field(default_factory=list)

    def table(self) -> str:
        """The paper's Tables 4-6 layout (percentages), evidence, failures and cost per method; one row per
        question type beneath each method when there are several types."""
        head = (f"{'Method':<18}{'n':>4}{'EM':>7}{'F1':>7}{'Acc':>7}{'Prec':>7}{'Rec':>7}{'EvRec':>7}{'EvPrec':>7}"
                f"{'fail%':>7}{'abst%':>7}{'unsup':>7}{'calls/q':>9}{'tok/q':>8}{'s/q':>8}")
        rows = [head]
        for name, r in self.results.items():
            rows.append(_row(name, r))
            if len(r.by_type) > 1:
                rows.extend(_row(f"  {kind}", scores) for kind, scores in r.by_type.items())
        return "\n".join(rows)

    def records(self, question_id: str) -> list[QuestionRecord]:
        """Every method's record of question ``question_id``."""
        return [r for r in self.questions if r.id == question_id]

    @classmethod
    def read(cls, path: Path) -> QAReport:
        return cls.model_validate(json.loads(path.read_text("utf-8")))


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _row(name: str, r: MethodScores) -> str:
    cells = [r.em, r.f1, r.accuracy, r.precision, r.recall, r.evidence_recall, r.evidence_precision, r.failed,
             r.abstained]
    return (f"{name:<18}{r.questions:>4}" + "".join(f"{_percent(v):>7}" for v in cells)
            + f"{r.unsupported_citations:>7.2f}{r.llm_calls_per_question:>9.2f}{r.tokens_per_question:>8.0f}"
            f"{r.seconds_per_question:>8.2f}")


AnswerFn = Callable[[str, str], Answer]  # (question, method) -> the method's answer
# Errors that would fail every remaining question alike: the evaluation stops on them instead.
_FATAL = (BudgetExceededError, Neo4jUnavailable)


def _evidence(out: Answer, question: QAQuestion, corpus: QACorpus) -> list[EvidenceChunk]:
    """The answer's evidence named by passage (a document outside the corpus map keeps its id), gold marked."""
    chunks = [EvidenceChunk(chunk_id=h.chunk_id, title=h.title,
                            passage=corpus.passages.get(h.document_id, h.document_id)) for h in out.evidence]
    return mark_evidence(question, chunks, corpus.keys)


def _answer_record(method: str, q: QAQuestion, answer_fn: AnswerFn, llm: LLM, corpus: QACorpus,
                   judge_llm: LLM | None) -> QuestionRecord:
    before, started = llm.accounting.report(), time.perf_counter()
    out: Answer | None = None
    failure: str | None = None
    try:
        out = answer_fn(q.question, method)
    except _FATAL:
        raise
    except StrataError as exc:
        failure = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - started
    spent = llm.accounting.report().minus(before)
    # Scored as QA benchmarks score: the model's few-word answer when it gave one, else the cited prose.
    prediction = (out.short_answer or strip_markers(out.answer)) if out is not None else ""
    scores = score_answer(prediction, q.answers)
    evidence = _evidence(out, q, corpus) if out is not None else []
    recall, precision = evidence_scores(q, evidence)
    judge_error = None
    if judge_llm is not None:
        if out is None:
            scores.accuracy = 0.0
        else:
            try:
                scores.accuracy = float(judge(judge_llm, q.question, q.answers, prediction).correct)
            except BudgetExceededError:
                raise
            except LLMError as exc:
                judge_error = f"{type(exc).__name__}: {exc}"
    return QuestionRecord(
        method=method, id=q.id, type=q.type, question=q.question, gold=q.answers, gold_titles=q.gold_titles,
        prediction=prediction, answer=strip_markers(out.answer) if out is not None else "", scores=scores,
        evidence_recall=_rounded(recall), evidence_precision=_rounded(precision),
        evidence=evidence, calls=spent.calls,
        prompt_tokens=spent.prompt_tokens, completion_tokens=spent.completion_tokens, seconds=round(seconds, 3),
        unsupported_citations=out.unsupported_citations if out is not None else 0,
        abstained=out.abstained if out is not None else False, failed=failure, judge_error=judge_error,
        stop_reason=out.stop_reason if out is not None else None, trace=out.trace if out is not None else [],
    )


def evaluate(questions: Sequence[QAQuestion], methods: Sequence[str], answer_fn: AnswerFn, *, dataset: str,
             corpus: QACorpus, llm: LLM, judge_llm: LLM | None = None,
             progress: Callable[[QuestionRecord], None] | None = None,
             distillation: DistillReport | None = None) -> QAReport:
    """Answer every question with every method and average the scores per method and question type.

    ``llm`` is the answering model (its accounting gives each run's calls and tokens); ``judge_llm``, when
    given, judges every answer (it may be ``llm`` itself). A run that raises a Strata error is recorded as
    failed with its reason; a budget stop or a lost Neo4j stops the evaluation.
    """
    records: list[QuestionRecord] = []
    for method in methods:
        for q in questions:
            record = _answer_record(method, q, answer_fn, llm, corpus, judge_llm)
            records.append(record)
            if progress is not None:
                progress(record)
    results = {m: method_result([r for r in records if r.method == m]) for m in methods}
    separate_judge = judge_llm is not None and judge_llm is not llm
    return QAReport(dataset=dataset, protocol=corpus.protocol, corpus=corpus.source, n_questions=len(questions),
                    n_passages=len(corpus.documents), llm=llm.accounting.report(), distillation=distillation,
                    judge=judge_llm.accounting.report() if separate_judge and judge_llm else None,
                    results=results, questions=records)


def render_question(records: Sequence[QuestionRecord]) -> str:
    """One question's records (one per method) as text: prediction, scores, evidence (* gold), cost, trace."""
    if not records:
        return ""
    first = records[0]
    lines = [f"question {first.id} ({first.type or UNTYPED}): {first.question}",
             f"gold: {' | '.join(first.gold)}; gold passages: {', '.join(first.gold_titles) or '-'}"]
    for r in records:
        s = r.scores
        lines += ["", f"[{r.method}] {r.prediction!r}" + (f"  FAILED: {r.failed}" if r.failed else "")
                  + ("  (abstained)" if r.abstained else ""),
                  f"  EM {s.em:.0f}  F1 {s.f1:.2f}  P {s.precision:.2f}  R {s.recall:.2f}  accuracy "
                  f"{'-' if s.accuracy is None else f'{s.accuracy:.0f}'}"
                  + (f" (judge failed: {r.judge_error})" if r.judge_error else ""),
                  f"  evidence recall {_percent(r.evidence_recall)}%  precision {_percent(r.evidence_precision)}%"
                  f"  unsupported citations {r.unsupported_citations}",
                  f"  {r.calls} LLM calls, {r.prompt_tokens} prompt + {r.completion_tokens} completion tokens, "
                  f"{r.seconds:.2f} s" + (f"; stopped: {r.stop_reason}" if r.stop_reason else "")]
        lines += [f"  {'*' if c.gold else ' '} {c.title} ({c.chunk_id})" for c in r.evidence]
        lines += [f"  {step.index}. {step.kind}: {json.dumps(step.detail, default=str, ensure_ascii=False)[:300]}"
                  for step in r.trace]
    return "\n".join(lines)


_CHART_METRICS = ("em", "f1", "accuracy", "evidence_recall", "evidence_precision")


def plot_report(report: QAReport, path: Path) -> Path:
    """PNG: grouped bars of EM, F1, (accuracy), evidence recall and precision per method, and beside them
    the LLM calls per question (seconds per question written on each bar)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = report.results
    metrics = [m for m in _CHART_METRICS if any(getattr(r, m) is not None for r in results.values())]
    names = list(results)
    width = 0.8 / len(metrics)
    fig, (ax, cost) = plt.subplots(1, 2, figsize=(max(8.0, 1.9 * len(names) + 4), 4.8),
                                   gridspec_kw={"width_ratios": [3, 1]})
    for i, metric in enumerate(metrics):
        values = [100 * (getattr(results[m], metric) or 0.0) for m in names]
        ax.bar([x + i * width for x in range(len(names))], values, width, label=metric.replace("_", " "))
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(names))], names, rotation=30, ha="right")
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.set_title(f"QA on {report.dataset} ({report.n_questions} questions, {report.protocol}, "
                 f"LLM: {report.llm.model or 'offline'})", fontsize=9)
    ax.legend(fontsize=8)
    calls = [results[m].llm_calls_per_question for m in names]
    bars = cost.bar(names, calls, color="grey")
    cost.set_ylim(0, 1.15 * max([1.0, *calls]))  # offline runs make no calls: keep the axis at zero and up
    for bar, m in zip(bars, names, strict=True):
        cost.annotate(f"{results[m].seconds_per_question:.1f}s", (bar.get_x() + bar.get_width() / 2,
                                                                  bar.get_height()), ha="center", va="bottom",
                      fontsize=7)
    cost.set_ylabel("LLM calls per question")
    cost.tick_params(axis="x", labelrotation=30)
    cost.set_title("cost (s/question on the bars)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


@contextmanager
def isolated_kb(settings: Settings, embedder: Embedder, llm: LLM, documents: Sequence[SourceDocument], *,
                layers: Sequence[str] = EVAL_LAYERS) -> Iterator[tuple[GraphStore, DistillReport | None]]:
    """A throwaway Neo4j holding ``documents`` (:attr:`QACorpus.documents`), distilled into ``layers`` by
    ``llm`` (an offline LLM builds the offline layers), with the distillation's report; never the user's KB.
    Loaded as ``strata eval retrieval`` loads them (:mod:`kg.app.evaluation.runner`)."""
    with isolated_store(settings, embedder) as store:
        loaded = load_corpus(store, embedder, documents, chunk_tokens=settings.chunk_tokens,
                             chunk_overlap=settings.chunk_overlap)
        yield store, distill_eval_layers(store, embedder, llm, loaded.written, layers)


def questions_of(dataset: Path, limit: int | None) -> list[QAQuestion]:
    questions = load_questions(dataset)
    return questions[:limit] if limit else questions
