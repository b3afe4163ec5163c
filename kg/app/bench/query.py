"""``strata bench query``: p50/p95 latency of each retrieval method at N passages, with exact numpy top-k
over the same vectors as the yardstick.

Passages are generated deterministically (a seeded mix of a fixed vocabulary, each passage with a unique
title) or read from a corpus file. Before timing, the distilled layers the methods read (atoms, triples, tags,
pseudo-graph) are built by their offline methods, as ``bench scale`` builds them, whatever LLM is configured:
the atom paths then search as many atoms as a distilled knowledge base holds (three per passage), and a model
would take hours at 10,000 passages. The report's ``distilled`` gives what each layer created, and
``ratio_to_numpy`` each method's p50 over numpy's. Queries are word windows of passages. Every method runs a
few warm-up queries first (the first calls pay for query planning and page-cache misses). Timings include
embedding the query, for the methods and for numpy alike. Everything runs in a throwaway Neo4j.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from kg.app.evaluation.retrieval import WARMUP_QUERIES
from kg.app.evaluation.runner import distill_eval_layers, isolated_store, load_corpus, method_unavailable
from kg.embeddings import Embedder
from kg.llm import LLM, OfflineLLM
from kg.retrieval import Retriever, make_retriever
from kg.settings import Settings
from kg.store.base import GraphStore
from loaders.builder import TextBuilder
from loaders.models import SourceDocument
from loaders.qa import QALoader

__all__ = ["BENCH_METHODS", "Latency", "QueryBenchReport", "exact_latency", "generate_passages", "method_latencies",
           "percentiles", "query_texts", "run_query_bench"]

BENCH_METHODS = ("chunk", "atom", "fulltext", "hybrid", "multigrain", "kg2rag", "pgrag", "tags", "hr", "strata",
                 "ppr")

_VOCABULARY = """river valley harbour castle railway station bridge museum library council election province district
mountain island forest desert glacier volcano lake canal festival cathedral monastery university college
school hospital factory mill mine quarry port airport highway tunnel tower fortress palace garden park
stadium theatre opera orchestra choir band album single film novel poem painting sculpture architect
engineer painter composer poet novelist scientist physician inventor explorer merchant bishop king queen
prince duke count general admiral senator governor mayor minister president founded built opened closed
destroyed restored renamed merged acquired elected appointed born died married studied taught wrote
composed painted designed discovered invented recorded released published won lost signed served led
northern southern eastern western central coastal ancient medieval modern industrial colonial royal
national regional municipal annual famous largest oldest smallest first second third last century decade
season war treaty battle siege rebellion dynasty empire republic kingdom colony company railway newspaper
magazine journal broadcaster network station record label team league championship cup""".split()  # noqa: SIM905 - a word list reads better as text


def generate_passages(count: int, *, start: int = 0, seed: int = 13) -> list[SourceDocument]:
    """Passages ``start`` to ``start + count - 1`` of a deterministic series: three sentences each, titled
    ``"Place <i>"``, the second naming an earlier passage (passage 0 names passage 1). Each passage has its
    own seeded generator, so a range is the same whether generated alone or as part of a longer run: a
    store can grow batch by batch (``strata bench scale``) and any passage can be regenerated to query it."""
    docs = []
    for i in range(start, start + count):
        rng = random.Random(f"{seed}:{i}")
        title = f"Place {i}"
        sentences = [f"{title} " + " ".join(rng.choices(_VOCABULARY, k=rng.randint(8, 16))) + "."
                     for _ in range(3)]
        # A named neighbour, so that entity, fact and title-link paths have real work to do.
        sentences[1] = sentences[1][:-1] + f" near Place {rng.randrange(i) if i else 1}."
        builder = TextBuilder(title)
        builder.add_block(" ".join(sentences))
        docs.append(builder.finish(source=f"bench:{title}", format="text", sha256=f"bench-{seed}-{i}"))
    return docs


def query_texts(docs: Sequence[SourceDocument], queries: int, *, seed: int = 7) -> list[str]:
    """``queries`` eight-word windows of passages drawn from ``docs`` (a seeded draw)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(queries):
        words = docs[rng.randrange(len(docs))].text.split()
        start = rng.randrange(max(len(words) - 8, 1))
        texts.append(" ".join(words[start:start + 8]))
    return texts


class Latency(BaseModel):
    p50_ms: float
    p95_ms: float


class QueryBenchReport(BaseModel):
    passages: int
    results: dict[str, Latency]
    numpy_exact: Latency
    ratio_to_numpy: dict[str, float] = Field(default_factory=dict)  # a method's p50 over numpy's p50
    distilled: dict[str, dict[str, int]] = Field(default_factory=dict)  # layer -> the nodes and edges it created
    unavailable: dict[str, str] = Field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return self.model_dump(mode="json", exclude={"unavailable"} if not self.unavailable else set())


def percentiles(samples_s: Sequence[float]) -> Latency:
    ms = np.asarray(samples_s, dtype=np.float64) * 1000
    return Latency(p50_ms=round(float(np.percentile(ms, 50)), 2), p95_ms=round(float(np.percentile(ms, 95)), 2))


def _time(run: Callable[[str], object], queries: Sequence[str], warmup: int) -> Latency:
    for q in queries[:warmup]:
        run(q)
    samples = []
    for q in queries:
        started = time.perf_counter()
        run(q)
        samples.append(time.perf_counter() - started)
    return percentiles(samples)


def exact_latency(matrix: np.ndarray, embedder: Embedder, queries: Sequence[str], *, k: int,
                  warmup: int) -> Latency:
    """The yardstick: embedding each query and an exact numpy top-``k`` over ``matrix`` (one vector a row)."""
    def exact(q: str) -> object:
        scores = matrix @ embedder.embed_query(q)
        top = np.argpartition(-scores, min(k, len(scores) - 1))[:k]
        return top[np.argsort(-scores[top])]

    return _time(exact, queries, warmup)


def method_latencies(store: GraphStore, embedder: Embedder, llm: LLM, rounds: Sequence[Sequence[str]], *, k: int,
                     methods: Sequence[str], warmup: int, progress: Callable[[str], None]
                     ) -> tuple[list[dict[str, Latency]], dict[str, str]]:
    """p50/p95 of each method that can run on this graph in each round of queries (one round or more), and why
    each other one cannot.

    ``warmup`` queries of the first round run untimed first. Within a round the methods are timed round-robin:
    each query runs every method, starting one method further along each time. Timed one after the other, the
    first methods alone paid for a page cache the preceding writes had left cold (at 100,000 passages their p95
    was 3 to 6 times that of a method using the same indexes later)."""
    retrievers: dict[str, Retriever] = {}
    unavailable: dict[str, str] = {}
    for method in methods:
        reason = method_unavailable(store, method)
        if reason is None:
            retrievers[method] = make_retriever(method, store, embedder, llm=llm)
        else:
            unavailable[method] = reason
    names = list(retrievers)
    for question in rounds[0][:warmup]:
        for name in names:
            retrievers[name].retrieve(question, k=k)
    results = []
    for number, queries in enumerate(rounds, 1):
        samples: dict[str, list[float]] = {name: [] for name in names}
        for i, question in enumerate(queries):
            for j in range(len(names)):
                name = names[(i + j) % len(names)]
                started = time.perf_counter()
                retrievers[name].retrieve(question, k=k)
                samples[name].append(time.perf_counter() - started)
        results.append({name: percentiles(samples[name]) for name in names})
        for name, latency in results[-1].items():
            progress(f"{name}: {latency}" if len(rounds) == 1 else f"round {number}, {name}: {latency}")
    return results, unavailable


def run_query_bench(settings: Settings, embedder: Embedder, llm: LLM, *, passages: int = 10_000,
                    corpus: Path | None = None, queries: int = 100, k: int = 10,
                    methods: Sequence[str] = BENCH_METHODS, warmup: int = WARMUP_QUERIES,
                    progress: Callable[[str], None] | None = None) -> QueryBenchReport:
    say = progress or (lambda _msg: None)
    docs = list(QALoader().load(corpus))[:passages] if corpus else generate_passages(passages)
    texts = query_texts(docs, queries)
    matrix = embedder.embed([d.text for d in docs])
    report = QueryBenchReport(passages=len(docs), results={},
                              numpy_exact=exact_latency(matrix, embedder, texts, k=k, warmup=warmup))
    with isolated_store(settings, embedder) as store:
        loaded = load_corpus(store, embedder, docs, chunk_tokens=settings.chunk_tokens,
                             chunk_overlap=settings.chunk_overlap)
        say(f"loaded {loaded.documents} passages")
        distilled = distill_eval_layers(store, embedder, OfflineLLM(), loaded.written)
        if distilled is not None:
            report.distilled = {name: layer.created for name, layer in distilled.layers.items()}
            say(f"distilled offline in {distilled.seconds:.1f} s: {report.distilled}")
        (report.results,), report.unavailable = method_latencies(store, embedder, llm, [texts], k=k,
                                                                 methods=methods, warmup=warmup, progress=say)
    # max(): a p50 rounded to 0.00 ms must not divide by zero.
    report.ratio_to_numpy = {method: round(latency.p50_ms / max(report.numpy_exact.p50_ms, 0.01), 1)
                             for method, latency in report.results.items()}
    return report
