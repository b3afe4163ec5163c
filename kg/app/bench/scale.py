"""``strata bench scale``: one store grown decade by decade (10k, 100k, ... passages), measured at each.

Passages are ``strata bench query``'s generated ones (titles, a named neighbour, offline entities and facts),
made, embedded (wordllama, or the configured embedder) and written ``BATCH`` at a time, so the client never
holds more than one batch of them. At each decade, for the passages it adds:

* ``ingest_chunks_per_s``: chunks written per second by the corpus writer, embedding included;
* ``distill_chunks_per_s``: new chunks per second through the offline layers every method reads (atoms,
  triples, tags, pseudo-graph), run as ``strata distill`` runs them, on the pending chunks, and
  ``distill_layer_seconds``: the seconds of each of those layers (the pseudo-graph's fusion included);
* ``index_seconds``: from the end of those writes until every index is online (``db.awaitIndexes``);
* ``store_mb``: the server's data folder on disk (store files and transaction logs);
* ``client_peak_mb``, ``server_peak_mb``: the highest RSS of this process and of the Neo4j JVM, sampled every
  ``SAMPLE_S`` seconds while the decade is built and queried;
* ``query``: p50/p95 of every retrieval method, and ``numpy_exact``: an exact numpy top-k over the very chunk
  vectors the store holds (read back from it, kept in a file-backed array), with the same queries: eight-word
  windows of passages drawn from the whole store.

The server is a throwaway local Neo4j with the heap and page cache a local server is provisioned with
(``STRATA_NEO4J_HEAP``/``STRATA_NEO4J_PAGECACHE`` or their RAM-based defaults), removed afterwards.
"""

from __future__ import annotations

import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import psutil
from pydantic import BaseModel, Field

from kg.app.bench.query import (
    BENCH_METHODS,
    Latency,
    exact_latency,
    generate_passages,
    method_latencies,
    query_texts,
)
from kg.app.evaluation.retrieval import WARMUP_QUERIES
from kg.app.evaluation.runner import EVAL_LAYERS
from kg.embeddings import Embedder
from kg.errors import LoaderError, ProvisioningError
from kg.layers.corpus.ingest import Ingestor
from kg.layers.distilled import distill
from kg.llm import OfflineLLM
from kg.provisioning.local import LocalNeo4j
from kg.provisioning.throwaway import throwaway_local_server
from kg.settings import Settings
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from kg.store.queries import CHUNK_EMBEDDINGS
from kg.store.schema import ensure_schema

__all__ = ["BATCH", "DecadeReport", "ScaleBenchReport", "decade_sizes", "run_scale_bench"]

BATCH = 5000  # passages generated, embedded and written at once
SAMPLE_S = 0.2
START_TIMEOUT_S = 900.0  # a loaded machine (other servers, a previous decade's JVM) starts Neo4j slowly


class DecadeReport(BaseModel):
    passages: int
    ingest_chunks_per_s: float
    distill_chunks_per_s: float
    distill_layer_seconds: dict[str, float]
    index_seconds: float
    store_mb: float
    client_peak_mb: float
    server_peak_mb: float
    query: dict[str, Latency]
    numpy_exact: Latency
    unavailable: dict[str, str] = Field(default_factory=dict)


class ScaleBenchReport(BaseModel):
    decades: list[DecadeReport] = Field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """The report as the issue gives it; a decade names methods that could not run only when some could
        not."""
        return {"decades": [d.model_dump(mode="json", exclude={"unavailable"} if not d.unavailable else set())
                            for d in self.decades]}


def decade_sizes(passages: int, first: int = 10_000) -> list[int]:
    """``first``, ten times it, ... while below ``passages``, then ``passages``: the store sizes measured."""
    sizes, size = [], first
    while size < passages:
        sizes.append(size)
        size *= 10
    return [*sizes, passages]


class PeakRSS:
    """The highest resident memory of some processes, sampled on a thread; :meth:`take` returns the peaks
    since the last call, in MB, and starts again."""

    def __init__(self, pids: Sequence[int]) -> None:
        self._processes = [psutil.Process(pid) for pid in pids]
        self._peaks = [0] * len(pids)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="strata-bench-rss", daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self._read()

    def _read(self) -> None:
        for n, process in enumerate(self._processes):
            try:
                self._peaks[n] = max(self._peaks[n], process.memory_info().rss)
            except psutil.Error:  # the server is stopping
                continue

    def take(self) -> list[float]:
        self._read()
        peaks, self._peaks = self._peaks, [0] * len(self._peaks)
        return [round(p / 2**20, 1) for p in peaks]

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


class _Vectors:
    """The store's chunk vectors in an append-only file, mapped for the exact top-k (bounded client memory)."""

    def __init__(self, path: Path, dimensions: int) -> None:
        self.path, self.dimensions, self.rows = path, dimensions, 0

    def append(self, store: GraphStore, document_ids: list[str]) -> None:
        rows = store.read(CHUNK_EMBEDDINGS, document_ids=document_ids)
        block = np.asarray([r["embedding"] for r in rows], dtype=np.float32).reshape(-1, self.dimensions)
        with self.path.open("ab") as out:
            out.write(block.tobytes())
        self.rows += len(block)

    def matrix(self) -> np.ndarray:
        return np.memmap(self.path, dtype=np.float32, mode="r", shape=(self.rows, self.dimensions))


@contextmanager
def _server(settings: Settings) -> Iterator[tuple[GraphStore, LocalNeo4j, int]]:
    """A throwaway local Neo4j provisioned as a knowledge base's would be; its store, server and JVM pid."""
    with throwaway_local_server(settings, heap=None, pagecache=None, start_timeout_s=START_TIMEOUT_S) as (server, info):
        if info.pid is None:
            raise ProvisioningError(f"the benchmark's Neo4j in {info.home} runs without a pid file to sample")
        with Neo4jGraphStore.connect(info.bolt_uri, info.user, info.password) as store:
            yield store, server, info.pid


def _folder_mb(folder: Path) -> float:
    return round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20, 1)


def _ingest(store: GraphStore, embedder: Embedder, settings: Settings, start: int, end: int,
            vectors: _Vectors) -> tuple[int, float]:
    """Passages ``start`` to ``end - 1`` written batch by batch; the chunks written and the seconds spent
    writing them (reading their vectors back for numpy is not counted)."""
    ingestor = Ingestor(store, embedder, chunk_tokens=settings.chunk_tokens, chunk_overlap=settings.chunk_overlap)
    chunks, seconds = 0, 0.0
    for offset in range(start, end, BATCH):
        docs = generate_passages(min(BATCH, end - offset), start=offset)
        started = time.perf_counter()
        prepared = [ingestor.prepare(doc) for doc in docs]
        outcomes = ingestor.write(prepared)
        seconds += time.perf_counter() - started
        failed = [o for o in outcomes if o.status == "failed"]
        if failed:
            raise LoaderError("bench scale", f"{len(failed)} generated passages failed to load: {failed[0].error}")
        chunks += sum(len(p.chunks) for p in prepared)
        vectors.append(store, [p.id for p in prepared])
    return chunks, seconds


def run_scale_bench(settings: Settings, embedder: Embedder, *, passages: int = 1_000_000,
                    first_decade: int = 10_000, queries: int = 50, k: int = 10,
                    methods: Sequence[str] = BENCH_METHODS, warmup: int = WARMUP_QUERIES,
                    progress: Callable[[str], None] | None = None) -> ScaleBenchReport:
    """Grow one store to each of :func:`decade_sizes` and measure it there (see the module docstring)."""
    say = progress or (lambda _msg: None)
    llm = OfflineLLM()
    report = ScaleBenchReport()
    with tempfile.TemporaryDirectory(prefix="strata-bench-scale-") as tmp, _server(settings) as (store, server, pid):
        ensure_schema(store, embedder.name, embedder.dimensions)
        vectors = _Vectors(Path(tmp) / "vectors.f32", embedder.dimensions)
        with PeakRSS([psutil.Process().pid, pid]) as rss:
            loaded = 0
            for size in decade_sizes(passages, first_decade):
                chunks, ingest_s = _ingest(store, embedder, settings, loaded, size, vectors)
                say(f"{size} passages: {chunks} chunks written in {ingest_s:.1f} s")
                started = time.perf_counter()
                distilled = distill(store, embedder, llm, layers=EVAL_LAYERS)
                distill_s = time.perf_counter() - started
                layer_s = {name: round(layer.seconds, 2) for name, layer in distilled.layers.items()}
                say(f"{size} passages: distilled in {distill_s:.1f} s ({layer_s})")
                started = time.perf_counter()
                store.write("meta/await_indexes", timeout_s=3600)
                index_s = time.perf_counter() - started
                rng = random.Random(size)
                picked = [generate_passages(1, start=rng.randrange(size))[0] for _ in range(queries)]
                texts = query_texts(picked, queries)
                latencies, unavailable = method_latencies(store, embedder, llm, texts, k=k, methods=methods,
                                                          warmup=warmup, progress=say)
                exact = exact_latency(vectors.matrix(), embedder, texts, k=k, warmup=warmup)
                client_mb, server_mb = rss.take()
                report.decades.append(DecadeReport(
                    passages=size, ingest_chunks_per_s=round(chunks / ingest_s, 1),
                    distill_chunks_per_s=round(chunks / distill_s, 1), distill_layer_seconds=layer_s,
                    index_seconds=round(index_s, 4),
                    store_mb=_folder_mb(server.data_dir), client_peak_mb=client_mb, server_peak_mb=server_mb,
                    query=latencies, numpy_exact=exact, unavailable=unavailable))
                say(report.decades[-1].model_dump_json())
                loaded = size
    return report
