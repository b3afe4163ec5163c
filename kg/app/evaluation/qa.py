"""Question-answering evaluation (PIKE-RAG 6.1, Tables 4-6), in an isolated knowledge base.

Metrics: EM, F1, precision and recall over SQuAD-normalised tokens, each the best over the gold answer's
aliases; accuracy by an LLM judge (task ``judge``, all aliases given at once) when an LLM is configured.
Per method: the means, and LLM calls and tokens per question. ``strata eval qa`` builds a throwaway Neo4j,
loads the corpus, answers every question with every method, and writes the JSON report, a table and a
PNG chart of the metrics per method.

>>> score_answer("the Morning Edition [1]", ["Morning Edition"]).em
1.0
>>> round(score_answer("Morning Edition show", ["Morning Edition"]).f1, 3)
0.8
"""

from __future__ import annotations

import collections
import re
import string
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kg.app.evaluation.runner import corpus_documents, distill_eval_layers, isolated_store, load_corpus
from kg.embeddings import Embedder
from kg.llm import JUDGE, LLM, JudgeVerdict, LLMReport, detect_language
from kg.settings import Settings
from kg.store.base import GraphStore
from loaders import QAQuestion, load_questions

__all__ = [
    "AnswerScores",
    "MethodResult",
    "QAReport",
    "best_f1",
    "evaluate",
    "exact_match",
    "isolated_kb",
    "judge",
    "normalize_answer",
    "plot_report",
    "questions_of",
    "score_answer",
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


class MethodResult(BaseModel):
    em: float
    f1: float
    precision: float
    recall: float
    accuracy: float | None
    llm_calls_per_question: float
    tokens_per_question: float


class QAReport(BaseModel):
    dataset: str
    n_questions: int
    llm: LLMReport  # the job's model and usage (loading, distillation, answers and judging)
    results: dict[str, MethodResult]
    per_question: list[dict[str, Any]] = Field(default_factory=list, exclude=True)

    def table(self) -> str:
        """The paper's Tables 4-6 layout (percentages), plus calls and tokens per question."""
        head = f"{'Method':<16}{'EM':>8}{'F1':>8}{'Acc':>8}{'Prec':>8}{'Recall':>8}{'calls/q':>9}{'tok/q':>9}"
        rows = [head]
        for name, r in self.results.items():
            acc = "-" if r.accuracy is None else f"{100 * r.accuracy:.2f}"
            rows.append(f"{name:<16}{100 * r.em:>8.2f}{100 * r.f1:>8.2f}{acc:>8}{100 * r.precision:>8.2f}"
                        f"{100 * r.recall:>8.2f}{r.llm_calls_per_question:>9.2f}{r.tokens_per_question:>9.0f}")
        return "\n".join(rows)


AnswerFn = Callable[[str, str], Any]  # (question, method) -> reasoning.Answer


def evaluate(questions: Sequence[QAQuestion], methods: Sequence[str], answer_fn: AnswerFn, *, dataset: str,
             llm: LLM) -> QAReport:
    """Answer every question with every method and average the scores (judge only with an LLM)."""
    from reasoning.evidence import strip_markers

    results: dict[str, MethodResult] = {}
    per_question: list[dict[str, Any]] = []
    for method in methods:
        scores: list[AnswerScores] = []
        calls = tokens = 0
        for q in questions:
            out = answer_fn(q.question, method)
            prediction = strip_markers(out.answer)
            sc = score_answer(prediction, q.answers)
            if not llm.offline:
                sc.accuracy = float(judge(llm, q.question, q.answers, prediction).correct)
            scores.append(sc)
            calls += out.usage.calls
            tokens += out.usage.tokens
            per_question.append({"method": method, "id": q.id, "prediction": prediction, "gold": q.answers,
                                 **sc.model_dump()})
        n = max(len(scores), 1)
        accs = [s.accuracy for s in scores if s.accuracy is not None]
        results[method] = MethodResult(
            em=sum(s.em for s in scores) / n, f1=sum(s.f1 for s in scores) / n,
            precision=sum(s.precision for s in scores) / n, recall=sum(s.recall for s in scores) / n,
            accuracy=sum(accs) / len(accs) if accs else None,
            llm_calls_per_question=calls / n, tokens_per_question=tokens / n,
        )
    return QAReport(dataset=dataset, n_questions=len(questions), llm=llm.accounting.report(), results=results,
                    per_question=per_question)


def plot_report(report: QAReport, path: Path) -> Path:
    """A grouped bar chart of EM, F1, precision, recall (and accuracy) per method, as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = ["em", "f1", "precision", "recall"] + (
        ["accuracy"] if any(r.accuracy is not None for r in report.results.values()) else [])
    names = list(report.results)
    width = 0.8 / len(metrics)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(names) + 2), 4.5))
    for i, metric in enumerate(metrics):
        values = [100 * (getattr(report.results[m], metric) or 0.0) for m in names]
        ax.bar([x + i * width for x in range(len(names))], values, width, label=metric)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(names))], names, rotation=30, ha="right")
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.set_title(f"QA on {report.dataset} ({report.n_questions} questions, LLM: {report.llm.model or 'offline'})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


@contextmanager
def isolated_kb(settings: Settings, embedder: Embedder, llm: LLM, dataset: Path, corpus: Path | None = None, *,
                limit: int | None = None) -> Iterator[GraphStore]:
    """A throwaway Neo4j holding the evaluation corpus, distilled for every method; never the user's KB.

    The corpus is ``corpus``'s passages or, without one, the paragraphs of the first ``limit`` questions
    of ``dataset``, loaded as ``strata eval retrieval`` loads them (:mod:`kg.app.evaluation.runner`).
    """
    docs = corpus_documents(dataset, corpus, limit=limit)
    with isolated_store(settings, embedder) as store:
        loaded = load_corpus(store, embedder, docs, chunk_tokens=settings.chunk_tokens,
                             chunk_overlap=settings.chunk_overlap)
        distill_eval_layers(store, embedder, llm, loaded.written)
        yield store


def questions_of(dataset: Path, limit: int | None) -> list[QAQuestion]:
    questions = load_questions(dataset)
    return questions[:limit] if limit else questions
