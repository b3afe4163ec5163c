"""``strata eval retrieval``: passage recall@k, supporting-sentence P/R/F1 and latency, per method.

Protocol (PIKE-RAG's, and HippoRAG's anchors): the corpus is the union of every question's paragraphs
(or a corpus file); each method retrieves more chunks than the largest k, chunks map back to their
passage (its :func:`~loaders.qa.passage_key`, a hash of title and text: MuSiQue repeats titles within a
question) and duplicates collapse, and recall@k = |top-k distinct passages ∩ gold| / |gold|, averaged
over the questions that have gold passages (MuSiQue's unanswerable ones have none; ``n_scored`` counts
the others). Supporting-sentence scores (HotpotQA-style gold only) compare the (passage, sentence) pairs
the retrieved chunks of the top-``sp_k`` passages cover (``Chunk.sentences``) with the gold sentences;
``sp_k`` is 5 when 5 is among the k values, else the smallest k.

Baselines run in the same process on the same passages: ``bm25`` (bm25s over title and text) and
``dense`` (exact cosine in numpy over the same embedder's passage vectors).

``by_type`` breaks recall down per question type (``QAQuestion.type``: HotpotQA's ``bridge`` and
``comparison``, MuSiQue's ``2hop``/``3hop``/``4hop``; ``untyped`` when a data set has none), with the
number of scored questions of each type in ``types``.

``questions`` (not in the JSON report; ``strata eval retrieval --per-question FILE`` writes it as JSON Lines)
holds, for each question, every method's top ``max(k)`` distinct passages by title and the rank at which each
gold passage came (None: not in that top): what a reader needs to see which questions a method misses and what
it ranked instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from kg.app.evaluation.runner import (
    corpus_documents,
    distill_eval_layers,
    isolated_store,
    layers_for,
    load_corpus,
    method_unavailable,
)
from kg.embeddings import Embedder
from kg.llm import LLM, LLMReport
from kg.retrieval import make_retriever
from kg.retrieval.common import graph_has
from kg.settings import Settings
from kg.shared.ids import document_id
from kg.store.queries import LIST_DOCUMENTS
from loaders import load_questions
from loaders.models import SourceDocument
from loaders.qa import QAQuestion, passage_key

__all__ = [
    "BASELINES", "DEFAULT_METHODS", "UNTYPED", "Bm25Baseline", "DenseBaseline", "MethodRanking", "MethodScores",
    "QuestionRanking", "Ranked", "RetrievalEvalConfig", "RetrievalReport", "distinct_passages", "gold_sentence_keys",
    "passage_recall", "question_rankings", "question_types", "run_retrieval_eval", "sentence_prf",
]

BASELINES = ("bm25", "dense")
DEFAULT_METHODS = (*BASELINES, "chunk", "atom", "fulltext", "hybrid", "multigrain", "kg2rag", "pgrag", "tags", "hr",
                   "strata", "ppr")
UNTYPED = "untyped"  # the type of a question its data set gives none
WARMUP_QUERIES = 5  # per method, untimed; `strata bench query` and `bench scale` warm up as many


class Ranked(BaseModel):
    """One retrieval result as the metrics see it: its passage's key and the sentence indices it covers."""

    passage: str
    sentences: list[int] = Field(default_factory=list)


def distinct_passages(ranked: Sequence[Ranked], k: int) -> list[str]:
    """The first ``k`` distinct passage keys, in rank order."""
    return list(dict.fromkeys(r.passage for r in ranked))[:k]


def passage_recall(ranked: Sequence[Ranked], gold: Sequence[str], k: int) -> float | None:
    """|top-k distinct passages ∩ gold| / |gold|; None when there is no gold (the question is not scored)."""
    wanted = set(gold)
    if not wanted:
        return None
    return len(set(distinct_passages(ranked, k)) & wanted) / len(wanted)


def gold_sentence_keys(question: QAQuestion) -> list[tuple[str, int]]:
    """The gold (title, index) sentences as (passage key, index): a title names its gold passage."""
    gold = set(question.gold_passages)
    by_title = {t: key for t, x in reversed(question.passages) if (key := passage_key(t, x)) in gold}
    return [(by_title[t], i) for t, i in question.gold_sentences if t in by_title]


def sentence_prf(ranked: Sequence[Ranked], gold: Sequence[tuple[str, int]], k: int) -> tuple[float, float, float]:
    """Precision, recall and F1 of the (passage key, sentence) pairs covered by the results in the top-k
    passages."""
    top = set(distinct_passages(ranked, k))
    predicted = {(r.passage, i) for r in ranked if r.passage in top for i in r.sentences}
    truth = set(gold)
    hit = len(predicted & truth)
    precision = hit / len(predicted) if predicted else 0.0
    recall = hit / len(truth) if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


class Bm25Baseline:
    """bm25s over each passage's title and text (English stop words removed)."""

    def __init__(self, passages: Sequence[SourceDocument]) -> None:
        import bm25s

        self._bm25s = bm25s
        self.passages = list(passages)
        self.model = bm25s.BM25()
        self.model.index(bm25s.tokenize([f"{p.title} {p.text}" for p in self.passages], stopwords="en",
                                        show_progress=False), show_progress=False)

    def search(self, question: str, k: int) -> list[Ranked]:
        tokens = self._bm25s.tokenize([question], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        ids, _ = self.model.retrieve(tokens, k=min(k, len(self.passages)), show_progress=False)
        return [_whole(self.passages[int(i)]) for i in ids[0]]


class DenseBaseline:
    """Exact cosine top-k in numpy over the embedder's passage vectors (the vector-index yardstick)."""

    def __init__(self, passages: Sequence[SourceDocument], embedder: Embedder) -> None:
        self.passages, self.embedder = list(passages), embedder
        self.matrix = embedder.embed([p.text for p in self.passages])

    def search(self, question: str, k: int) -> list[Ranked]:
        scores = self.matrix @ self.embedder.embed_query(question)
        top = np.argsort(-scores)[:k]
        return [_whole(self.passages[int(i)]) for i in top]


def _whole(passage: SourceDocument) -> Ranked:
    return Ranked(passage=passage_key(passage.title, passage.text), sentences=[s.index for s in passage.sentences])


class RetrievalEvalConfig(BaseModel):
    dataset: Path
    corpus: Path | None = None
    ks: list[int] = Field(default_factory=lambda: [2, 5, 10])
    methods: list[str] = Field(default_factory=lambda: list(DEFAULT_METHODS))
    limit: int | None = None
    kb: str | None = None
    depth_factor: int = 3  # chunks retrieved per question = depth_factor * max(ks), so duplicates collapse


class MethodRanking(BaseModel):
    """What one method ranked for one question: its top passages by title, and each gold passage's rank
    (1-based, in the question's gold order; None when it is not in that top)."""

    top: list[str]
    gold_ranks: list[int | None]


class QuestionRanking(BaseModel):
    """One question's line of ``--per-question``: its gold passages by title and every method's ranking."""

    id: str
    type: str | None
    question: str
    gold: list[str]
    methods: dict[str, MethodRanking]


class RetrievalReport(BaseModel):
    dataset: str
    n_questions: int
    n_scored: int  # the questions with gold passages, which recall averages over
    n_passages: int
    embedder: str
    llm: LLMReport  # the job's model and usage (distillation and LLM-driven retrieval)
    results: dict[str, dict[str, float | None]]
    types: dict[str, int] = Field(default_factory=dict)  # scored questions per question type
    by_type: dict[str, dict[str, dict[str, float | None]]] = Field(default_factory=dict)  # method -> type -> recall@k
    unavailable: dict[str, str] = Field(default_factory=dict)
    questions: list[QuestionRanking] = Field(default_factory=list)  # per question; not in to_json

    def to_json(self) -> dict[str, Any]:
        """The report's JSON; ``unavailable`` appears only when some method could not run."""
        return self.model_dump(mode="json", exclude={"questions", *(() if self.unavailable else ("unavailable",))})

    def question_lines(self) -> str:
        """``questions`` as JSON Lines, one question a line."""
        return "".join(q.model_dump_json() + "\n" for q in self.questions)


class MethodScores(BaseModel):
    """One method's scores: over every question, and recall@k per question type."""

    overall: dict[str, float | None]
    by_type: dict[str, dict[str, float | None]]
    ranked: list[list[str]]  # per question, in order: the top max(k) distinct passage keys


def _mean(total: float, n: int) -> float | None:
    return round(total / n, 4) if n else None


def _score(search: Callable[[str], list[Ranked]], questions: Sequence[QAQuestion], ks: Sequence[int],
           sp_k: int) -> MethodScores:
    """Recall@k (overall and per question type), supporting-sentence P/R/F1 and ms per query of ``search``."""
    recalls = {k: 0.0 for k in ks}
    typed: dict[str, dict[int, float]] = {}
    scored: dict[str, int] = {}
    sp = np.zeros(3)
    with_sentences = 0
    elapsed = 0.0
    # Untimed warm-up queries: the first ones pay for query planning, a server's JIT and cold caches (on a kept
    # evaluation server just started, 79 ms a chunk query over 60 questions, then 33 ms).
    for q in questions[:WARMUP_QUERIES]:
        search(q.question)
    tops = []
    for q in questions:
        started = time.perf_counter()
        ranked = search(q.question)
        elapsed += time.perf_counter() - started
        tops.append(distinct_passages(ranked, max(ks)))
        if q.gold_passages:
            kind = q.type or UNTYPED
            scored[kind] = scored.get(kind, 0) + 1
            per_type = typed.setdefault(kind, {k: 0.0 for k in ks})
            for k in ks:
                recall = passage_recall(ranked, q.gold_passages, k) or 0.0
                recalls[k] += recall
                per_type[k] += recall
        sentences = gold_sentence_keys(q)
        if sentences:
            with_sentences += 1
            sp += sentence_prf(ranked, sentences, sp_k)
    n = max(len(questions), 1)
    total = sum(scored.values())
    out: dict[str, float | None] = {f"recall@{k}": _mean(recalls[k], total) for k in ks}
    names = ("sp_precision", "sp_recall", "sp_f1")
    for name, value in zip(names, sp, strict=True):
        out[name] = _mean(float(value), with_sentences)
    out["ms_per_query"] = round(1000 * elapsed / n, 2)
    by_type = {kind: {f"recall@{k}": _mean(sums[k], scored[kind]) for k in ks} for kind, sums in sorted(typed.items())}
    return MethodScores(overall=out, by_type=by_type, ranked=tops)


def question_types(questions: Sequence[QAQuestion]) -> dict[str, int]:
    """The scored questions (those with gold passages) of each type."""
    counts: dict[str, int] = {}
    for q in questions:
        if q.gold_passages:
            counts[q.type or UNTYPED] = counts.get(q.type or UNTYPED, 0) + 1
    return dict(sorted(counts.items()))


def run_retrieval_eval(config: RetrievalEvalConfig, settings: Settings, embedder: Embedder, llm: LLM,
                       *, progress: Callable[[str], None] | None = None) -> RetrievalReport:
    """Load the corpus into an isolated Neo4j, distill it when possible, and score every method."""
    say = progress or (lambda _msg: None)
    questions = load_questions(config.dataset)[:config.limit]
    docs = corpus_documents(config.dataset, config.corpus, limit=config.limit)
    ks = sorted(set(config.ks))
    sp_k = 5 if 5 in ks else ks[0]
    depth = config.depth_factor * ks[-1]
    results: dict[str, MethodScores] = {}
    unavailable: dict[str, str] = {}
    say(f"{len(questions)} questions, {len(docs)} passages")
    # Hits name their document; the metrics name passages by key.
    passage_of = {document_id(d.source): passage_key(d.title, d.text) for d in docs}
    absent = {g for q in questions for g in q.gold_passages} - set(passage_of.values())
    if absent:
        say(f"{len(absent)} gold passages are not in the corpus (no passage with their title and text)")
    if "bm25" in config.methods:
        bm25 = Bm25Baseline(docs)
        results["bm25"] = _score(lambda q: bm25.search(q, depth), questions, ks, sp_k)
    if "dense" in config.methods:
        dense = DenseBaseline(docs, embedder)
        results["dense"] = _score(lambda q: dense.search(q, depth), questions, ks, sp_k)
    strata_methods = [m for m in config.methods if m not in BASELINES]
    if not strata_methods:
        return _report(config, questions, docs, embedder, llm, results, unavailable, say)
    with isolated_store(settings, embedder, kb=config.kb) as store:
        loaded = load_corpus(store, embedder, docs, chunk_tokens=settings.chunk_tokens,
                             chunk_overlap=settings.chunk_overlap)
        say(f"corpus: {len(loaded.written)} passages written, {loaded.removed} removed")
        todo = loaded.written if graph_has(store, "Atom") else [r["id"] for r in
                                                                 store.read(LIST_DOCUMENTS, skip=0,
                                                                            limit=10_000_000)]
        distill_eval_layers(store, embedder, llm, todo, layers_for(strata_methods))
        say("distilled layer: built" + (" (offline methods)" if llm.offline else ""))
        for method in strata_methods:
            reason = method_unavailable(store, method)
            if reason is not None:
                unavailable[method] = reason
                say(f"{method}: unavailable ({reason})")
                continue
            retriever = make_retriever(method, store, embedder, llm=llm)

            def search(question: str, retriever: Any = retriever) -> list[Ranked]:
                return [Ranked(passage=passage_of.get(h.document_id, h.document_id), sentences=h.sentences)
                        for h in retriever.retrieve(question, k=depth)]

            results[method] = _score(search, questions, ks, sp_k)
            say(f"{method}: {results[method].overall}")
    return _report(config, questions, docs, embedder, llm, results, unavailable, say)


def _report(config: RetrievalEvalConfig, questions: Sequence[QAQuestion], docs: Sequence[SourceDocument],
            embedder: Embedder, llm: LLM, results: dict[str, MethodScores],
            unavailable: dict[str, str], say: Callable[[str], None]) -> RetrievalReport:
    report = RetrievalReport(
        dataset=str(config.dataset), n_questions=len(questions), n_passages=len(docs), embedder=embedder.name,
        n_scored=sum(1 for q in questions if q.gold_passages),
        llm=llm.accounting.report(), results={m: r.overall for m, r in results.items()},
        types=question_types(questions), by_type={m: r.by_type for m, r in results.items()}, unavailable=unavailable,
        questions=question_rankings(questions, docs, results),
    )
    say(f"llm: {report.llm.summary()}")
    return report


def question_rankings(questions: Sequence[QAQuestion], docs: Sequence[SourceDocument],
                      results: dict[str, MethodScores]) -> list[QuestionRanking]:
    """Each question's gold passages and every method's ranking of it, passages named by their titles."""
    title = {passage_key(d.title, d.text): d.title for d in docs}
    rankings = []
    for i, q in enumerate(questions):
        methods = {}
        for method, scores in results.items():
            top = scores.ranked[i]
            position = {key: rank for rank, key in enumerate(top, start=1)}
            methods[method] = MethodRanking(top=[title.get(key, key) for key in top],
                                            gold_ranks=[position.get(key) for key in q.gold_passages])
        rankings.append(QuestionRanking(id=q.id, type=q.type, question=q.question,
                                        gold=[title.get(key, key) for key in q.gold_passages], methods=methods))
    return rankings
