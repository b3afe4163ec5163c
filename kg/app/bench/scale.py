"""``strata bench scale``: one store grown decade by decade (10k, 100k, ... passages), measured at each.

Passages are ``strata bench query``'s generated ones (titles, a named neighbour, offline entities and facts),
made, embedded (wordllama, or the configured embedder) and written ``BATCH`` at a time, so the client never
holds more than one batch of them. At each decade, for the passages it adds:

* ``ingest_chunks_per_s``: chunks written per second by the corpus writer, embedding included;
* ``distill_chunks_per_s``: new chunks per second through the offline layers every method reads (atoms,
  triples, tags, pseudo-graph), run as ``strata distill`` runs them, on the pending chunks, and
  ``distill_layer_seconds``: the seconds of each of those layers (the pseudo-graph's fusion included);
* ``distill_cpu_ms_per_chunk``: the CPU (user and system, from ``/proc``) both processes, this client and the
  Neo4j JVM, spent distilling, per new chunk; ``distill_cpu_ms_per_chunk_by_process`` splits it into
  ``client`` and ``server``, and ``distill_layer_cpu_ms_per_chunk`` by layer as well (a layer's share is the CPU
  spent while ``distill`` reported progress for it);
* ``index_seconds``: from the end of those writes until every index is online (``db.awaitIndexes``);
* ``settle_seconds``: from then until the server's background work is done (:func:`kg.shared.processes.await_quiet`
  on its JVM: at most an hour, reached only if it never quietens): Lucene merges the index segments the decade's
  writes left after the writes, and queries timed while it merges measure the merge; ``settle_cpu_ms_per_chunk``:
  the server's CPU while it settled, per new chunk (merging HNSW graphs costs more than inserting into them:
  docs/scaling.md, "What the distilled layer costs"), which ``distill_cpu_ms_per_chunk`` does not count;
* ``store_mb``: the server's data folder on disk (store files and transaction logs), and
  ``store_bytes_per_chunk``: that folder over every chunk the store holds;
* ``client_peak_mb``, ``server_peak_mb``: the highest RSS of this process and of the Neo4j JVM, sampled every
  ``SAMPLE_S`` seconds while the decade is built and queried, and ``server_memory``: the heap and page cache
  of each run's server (a resumed decade may have run with several);
* ``query``: p50/p95 of every retrieval method, and ``numpy_exact``: an exact numpy top-k over the very chunk
  vectors the store holds (read back from it, kept in a file-backed array), with the same queries: eight-word
  windows of passages drawn from the whole store. They are the second of two rounds of as many queries, each
  drawn from other passages: ``query_first_round`` is the first, timed just after the decade's writes and
  settling, when the server's caches hold what distillation left in them (or nothing, on a server a resumed
  run has just started), and the second shows the methods once queries like them have run for a while.

The server is a local Neo4j with the heap and page cache a local server is provisioned with
(``STRATA_NEO4J_HEAP``/``STRATA_NEO4J_PAGECACHE`` or their RAM-based defaults): a throwaway one, removed
afterwards, or, with ``store``, one kept in that folder with the vectors and a progress file
(``scale-progress.json``), saved after each batch of passages and every ``CHECKPOINT_S`` seconds of
distillation. A run that stops for any reason (a crash, a kill, the end of a working day: the million takes
hours) continues from there when started again on the same folder: finished decades are reported as recorded,
the decade under way resumes its ingest at the first unsaved batch (a batch the store already holds is
written again as ``unchanged``) and its distillation on the pending chunks, with each figure summed over the
runs; ``runs`` says how many processes a decade took. A resumed run restarts the server, so a decade of
several runs pays for a cold JVM more than once, and loses at most the last ``CHECKPOINT_S`` seconds it ran.
A folder can also be grown further by asking for more passages.
"""

from __future__ import annotations

import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
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
from kg.errors import ConfigError, LoaderError, ProvisioningError
from kg.layers.corpus.ingest import Ingestor
from kg.layers.distilled import distill
from kg.llm import OfflineLLM
from kg.provisioning.local import LocalNeo4j, ServerInfo, stop_server
from kg.provisioning.throwaway import throwaway_local_server
from kg.settings import Settings, free_port
from kg.shared.private import private_dir, write_private
from kg.shared.processes import await_quiet, cpu_seconds
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from kg.store.queries import CHUNK_EMBEDDINGS
from kg.store.schema import ensure_schema

__all__ = ["BATCH", "DecadeReport", "ScaleBenchReport", "ScaleProgress", "ServerMemory", "decade_sizes",
           "run_scale_bench"]

BATCH = 5000  # passages generated, embedded and written at once
SAMPLE_S = 0.2
CHECKPOINT_S = 10.0  # a resumed distillation loses at most this much of the time it had run
PROGRESS_S = 60.0
PROGRESS_FILE = "scale-progress.json"
START_TIMEOUT_S = 900.0  # a loaded machine (other servers, a previous decade's JVM) starts Neo4j slowly


class ServerMemory(BaseModel):
    """The heap and page cache a run's server was given (Neo4j sizes, e.g. ``3013m``)."""

    heap: str
    pagecache: str


class DecadeReport(BaseModel):
    passages: int
    ingest_chunks_per_s: float
    distill_chunks_per_s: float
    distill_layer_seconds: dict[str, float]
    # None or empty: a decade recorded before these fields
    distill_cpu_ms_per_chunk: float | None = None
    distill_cpu_ms_per_chunk_by_process: dict[str, float] = Field(default_factory=dict)
    distill_layer_cpu_ms_per_chunk: dict[str, dict[str, float]] = Field(default_factory=dict)
    index_seconds: float
    settle_seconds: float | None = None  # None: a decade recorded before this field
    settle_cpu_ms_per_chunk: float | None = None  # None: a decade recorded before this field
    store_mb: float
    store_bytes_per_chunk: float | None = None
    client_peak_mb: float
    server_peak_mb: float
    query: dict[str, Latency]
    query_first_round: dict[str, Latency] = Field(default_factory=dict)  # empty: a decade recorded before it
    numpy_exact: Latency
    runs: int = 1
    server_memory: list[ServerMemory] = Field(default_factory=list)
    unavailable: dict[str, str] = Field(default_factory=dict)


class ScaleBenchReport(BaseModel):
    decades: list[DecadeReport] = Field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """The report as the issue gives it; a decade names methods that could not run only when some could
        not, and its servers' memory, settling time and first round unless a progress file from before those
        fields recorded it."""
        optional = ("unavailable", "server_memory", "settle_seconds", "settle_cpu_ms_per_chunk", "query_first_round",
                    "distill_cpu_ms_per_chunk", "distill_cpu_ms_per_chunk_by_process",
                    "distill_layer_cpu_ms_per_chunk", "store_bytes_per_chunk")
        return {"decades": [d.model_dump(mode="json",
                                         exclude={name for name in optional if getattr(d, name) in (None, {}, [])})
                            for d in self.decades]}


def decade_sizes(passages: int, first: int = 10_000) -> list[int]:
    """``first``, ten times it, ... while below ``passages``, then ``passages``: the store sizes measured."""
    sizes, size = [], first
    while size < passages:
        sizes.append(size)
        size *= 10
    return [*sizes, passages]


class DecadeProgress(BaseModel):
    """The decade under way as far as it was saved: its chunks, seconds and peaks so far, and the runs it took."""

    passages: int
    chunks: int = 0
    ingest_seconds: float = 0.0
    distill_seconds: float = 0.0
    layer_seconds: dict[str, float] = Field(default_factory=dict)
    layer_cpu_seconds: dict[str, dict[str, float]] = Field(default_factory=dict)  # layer -> client/server seconds
    cpu_seconds: dict[str, float] = Field(default_factory=dict)  # client/server, the whole distillation
    distilled: bool = False
    client_peak_mb: float = 0.0
    server_peak_mb: float = 0.0
    runs: int = 1
    server_memory: list[ServerMemory] = Field(default_factory=list)


class ScaleProgress(BaseModel):
    """A kept benchmark store's progress file: what it was built with, the passages it holds (``written``) and
    their rows in the vectors file, its finished decades and the one under way."""

    embedder: str
    first_decade: int
    written: int = 0
    vector_rows: int = 0
    decades: list[DecadeReport] = Field(default_factory=list)
    current: DecadeProgress | None = None


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

    def peek(self) -> list[float]:
        """The peaks since the last :meth:`take`, in MB."""
        self._read()
        return [round(p / 2**20, 1) for p in self._peaks]

    def take(self) -> list[float]:
        peaks = self.peek()
        self._peaks = [0] * len(self._peaks)
        return peaks

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


PROCESSES = ("client", "server")  # the order of the pids a CpuSeconds reads


class CpuSeconds:
    """The CPU seconds (user and system, every thread, from ``/proc``) this client and the server have used,
    read on demand; a process that has gone keeps its last reading."""

    def __init__(self, pids: Sequence[int]) -> None:
        self._processes = [psutil.Process(pid) for pid in pids]
        self._last = [0.0] * len(pids)
        self.read()

    def read(self) -> dict[str, float]:
        for n, process in enumerate(self._processes):
            try:
                self._last[n] = cpu_seconds(process)
            except psutil.Error:
                continue
        return dict(zip(PROCESSES, self._last, strict=True))


def _added(total: dict[str, float], before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {name: total.get(name, 0.0) + after[name] - before[name] for name in after}


class _Vectors:
    """The store's chunk vectors in an append-only file, mapped for the exact top-k (bounded client memory).
    Opened at ``rows`` (a resumed run's saved rows), it drops what a stopped run appended after its last save."""

    def __init__(self, path: Path, dimensions: int, rows: int = 0) -> None:
        self.path, self.dimensions, self.rows = path, dimensions, rows
        with self.path.open("ab") as out:
            if out.tell() < rows * dimensions * 4:
                raise ConfigError(f"{path}: {out.tell()} bytes, short of the {rows} vectors its progress file "
                                  "saved; use another --store folder")
            out.truncate(rows * dimensions * 4)

    def append(self, store: GraphStore, document_ids: list[str]) -> None:
        rows = store.read(CHUNK_EMBEDDINGS, document_ids=document_ids)
        block = np.asarray([r["embedding"] for r in rows], dtype=np.float32).reshape(-1, self.dimensions)
        with self.path.open("ab") as out:
            out.write(block.tobytes())
        self.rows += len(block)

    def matrix(self) -> np.ndarray:
        return np.memmap(self.path, dtype=np.float32, mode="r", shape=(self.rows, self.dimensions))


class _Bench:
    """Where a run keeps its server, vectors and progress: a temporary folder, or ``store`` (kept, resumable)."""

    def __init__(self, folder: Path, embedder: Embedder, first_decade: int, kept: bool) -> None:
        self.folder, self.kept = folder, kept
        self.rss: PeakRSS | None = None  # the peaks a save keeps, once sampling runs
        self.file = folder / PROGRESS_FILE
        fresh = ScaleProgress(embedder=embedder.name, first_decade=first_decade)
        self.progress = self._load(fresh) if kept and self.file.is_file() else fresh
        self.vectors = _Vectors(folder / "vectors.f32", embedder.dimensions, self.progress.vector_rows)

    def _load(self, fresh: ScaleProgress) -> ScaleProgress:
        try:
            saved = ScaleProgress.model_validate_json(self.file.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{self.file}: not a bench scale progress file ({exc})") from exc
        for field in ("embedder", "first_decade"):
            if getattr(saved, field) != getattr(fresh, field):
                raise ConfigError(f"{self.file}: the store was built with {field}={getattr(saved, field)!r}, "
                                  f"not {getattr(fresh, field)!r}; use another --store folder")
        return saved

    def save(self) -> None:
        if not self.kept:
            return
        decade = self.progress.current
        if decade is not None and self.rss is not None:
            client_mb, server_mb = self.rss.peek()
            decade.client_peak_mb = max(decade.client_peak_mb, client_mb)
            decade.server_peak_mb = max(decade.server_peak_mb, server_mb)
        self.progress.vector_rows = self.vectors.rows
        write_private(self.file, self.progress.model_dump_json(indent=1))


@contextmanager
def _bench_folder(store: Path | None) -> Iterator[Path]:
    if store is not None:
        yield private_dir(store)
        return
    with tempfile.TemporaryDirectory(prefix="strata-bench-scale-") as tmp:
        yield Path(tmp)


@contextmanager
def _server(settings: Settings, home: Path | None) -> Iterator[tuple[GraphStore, LocalNeo4j, int]]:
    """A local Neo4j provisioned as a knowledge base's would be (a throwaway one, or one kept in ``home``); its
    store, server and JVM pid."""
    with _local_server(settings, home) as (server, info):
        if info.pid is None:
            raise ProvisioningError(f"the benchmark's Neo4j in {info.home} runs without a pid file to sample")
        with Neo4jGraphStore.connect(info.bolt_uri, info.user, info.password) as store:
            yield store, server, info.pid


@contextmanager
def _local_server(settings: Settings, home: Path | None) -> Iterator[tuple[LocalNeo4j, ServerInfo]]:
    if home is None:
        with throwaway_local_server(settings, heap=None, pagecache=None, start_timeout_s=START_TIMEOUT_S) as started:
            yield started
        return
    # A server a killed run left behind is stopped: this run starts it again on ports of its own.
    stop_server(home)
    server = LocalNeo4j(settings.local.another_server(home, bolt_port=free_port(), http_port=free_port(),
                                                      start_timeout_s=START_TIMEOUT_S))
    info = server.start()
    try:
        yield server, info
    finally:
        server.stop()


def _folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def _per_chunk(seconds_by_process: dict[str, float], chunks: int) -> dict[str, float]:
    """CPU seconds (per process) as milliseconds per chunk."""
    return {name: round(seconds * 1000 / chunks, 3) for name, seconds in seconds_by_process.items()}


class _DistillClock:
    """A decade's distillation seconds, in all and per layer, added to what earlier runs saved, and saved every
    ``CHECKPOINT_S`` seconds while it runs (its layer is the one ``distill`` last reported progress for), and the
    CPU both processes used, in all and per layer, booked the same way; says how far each layer is when it starts
    and every ``PROGRESS_S`` seconds (a million passages distil for hours)."""

    def __init__(self, bench: _Bench, decade: DecadeProgress, cpu: CpuSeconds, say: Callable[[str], None]) -> None:
        self.bench, self.decade, self.cpu, self.say = bench, decade, cpu, say
        self._cpu_started = self._cpu_ticked = cpu.read()
        self._cpu_total = dict(decade.cpu_seconds)
        self._cpu_layers = {name: dict(seconds) for name, seconds in decade.layer_cpu_seconds.items()}
        self._said = 0.0
        self._total, self._before = decade.distill_seconds, dict(decade.layer_seconds)
        self._layers = dict(self._before)
        self._started = self._layer_started = time.perf_counter()
        self._layer: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._checkpoints, name="strata-bench-checkpoint", daemon=True)

    def layer(self, name: str, done: int, total: int) -> None:
        with self._lock:
            if name != self._layer:
                self._tick()
                self._layer = name
                self._said = 0.0
            now = time.perf_counter()
            if now - self._said >= PROGRESS_S:
                self._said = now
                self.say(f"{self.decade.passages} passages: {name} {done} of {total} pending chunks, "
                         f"{self._layers.get(name, 0.0) + now - self._layer_started:.0f} s")

    def _tick(self) -> None:
        """Books the time and CPU since the last tick to the current layer (under the lock)."""
        now, cpu = time.perf_counter(), self.cpu.read()
        if self._layer is not None:
            self._layers[self._layer] = self._layers.get(self._layer, 0.0) + now - self._layer_started
            self._cpu_layers[self._layer] = _added(self._cpu_layers.get(self._layer, {}), self._cpu_ticked, cpu)
        self._layer_started, self._cpu_ticked = now, cpu

    def _book(self) -> None:
        """The decade's figures so far (under the lock)."""
        self._tick()
        self.decade.distill_seconds = self._total + time.perf_counter() - self._started
        self.decade.cpu_seconds = _added(self._cpu_total, self._cpu_started, self._cpu_ticked)
        self.decade.layer_cpu_seconds = {name: dict(seconds) for name, seconds in self._cpu_layers.items()}

    def _checkpoints(self) -> None:
        while not self._stop.wait(CHECKPOINT_S):
            with self._lock:
                self._book()
                self.decade.layer_seconds = dict(self._layers)
                self.bench.save()

    def finish(self, layer_seconds: dict[str, float]) -> None:
        """Stops the checkpoints; this run's per-layer figures are ``distill``'s report's, not the sampled ones."""
        self._stop.set()
        self._thread.join()
        with self._lock:
            self._book()
        self.decade.layer_seconds = {name: round(self._before.get(name, 0.0) + seconds, 2)
                                     for name, seconds in layer_seconds.items()}

    def __enter__(self) -> _DistillClock:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _ingest(store: GraphStore, embedder: Embedder, settings: Settings, bench: _Bench, decade: DecadeProgress,
            end: int, batch: int, say: Callable[[str], None]) -> None:
    """The passages from the store's last saved one to ``end - 1``, written and saved batch by batch; the
    decade counts their chunks and the seconds spent writing them (reading their vectors back for numpy is not
    counted)."""
    ingestor = Ingestor(store, embedder, chunk_tokens=settings.chunk_tokens, chunk_overlap=settings.chunk_overlap)
    progress = bench.progress
    while progress.written < end:
        docs = generate_passages(min(batch, end - progress.written), start=progress.written)
        started = time.perf_counter()
        prepared = [ingestor.prepare(doc) for doc in docs]
        outcomes = ingestor.write(prepared)
        decade.ingest_seconds += time.perf_counter() - started
        failed = [o for o in outcomes if o.status == "failed"]
        if failed:
            raise LoaderError("bench scale", f"{len(failed)} generated passages failed to load: {failed[0].error}")
        decade.chunks += sum(len(p.chunks) for p in prepared)
        bench.vectors.append(store, [p.id for p in prepared])
        progress.written += len(docs)
        bench.save()
        say(f"{decade.passages} passages: {progress.written} stored, {decade.chunks} chunks written in "
            f"{decade.ingest_seconds:.1f} s")


def run_scale_bench(settings: Settings, embedder: Embedder, *, passages: int = 1_000_000,
                    first_decade: int = 10_000, queries: int = 50, k: int = 10,
                    methods: Sequence[str] = BENCH_METHODS, warmup: int = WARMUP_QUERIES, store: Path | None = None,
                    batch: int = BATCH, progress: Callable[[str], None] | None = None) -> ScaleBenchReport:
    """Grow one store to each of :func:`decade_sizes` and measure it there, in a throwaway server or, resumable,
    in ``store`` (see the module docstring)."""
    say = progress or (lambda _msg: None)
    llm = OfflineLLM()
    with _bench_folder(store) as folder:
        bench = _Bench(folder, embedder, first_decade, kept=store is not None)
        if bench.progress.written > passages:
            raise ConfigError(f"{bench.file}: the store holds {bench.progress.written} passages already; ask for "
                              "at least as many with --passages")
        with _server(settings, folder / "neo4j" if bench.kept else None) as (graph, server, pid):
            ensure_schema(graph, embedder.name, embedder.dimensions)
            with PeakRSS([psutil.Process().pid, pid]) as rss:
                bench.rss = rss
                try:
                    return _grow(graph, server, pid, rss, embedder, llm, settings, bench, passages=passages,
                                 queries=queries, k=k, methods=methods, warmup=warmup, batch=batch, say=say)
                except BaseException:
                    if bench.kept:
                        say(f"stopped with {bench.progress.written} passages stored; {bench.file} has the "
                            "progress, and the same command carries on from it")
                    raise


def _say_at(say: Callable[[str], None], size: int, message: str) -> None:
    say(f"{size} passages, {message}")


def _decade_queries(size: int, queries: int, seed: int | str) -> list[str]:
    """``queries`` query texts from passages drawn across a store of ``size`` (the same draw for the same seed)."""
    rng = random.Random(seed)
    return query_texts([generate_passages(1, start=rng.randrange(size))[0] for _ in range(queries)], queries)


def _grow(graph: GraphStore, server: LocalNeo4j, server_pid: int, rss: PeakRSS, embedder: Embedder, llm: OfflineLLM,
          settings: Settings, bench: _Bench, *, passages: int, queries: int, k: int, methods: Sequence[str],
          warmup: int, batch: int, say: Callable[[str], None]) -> ScaleBenchReport:
    progress = bench.progress
    cpu = CpuSeconds([psutil.Process().pid, server_pid])
    finished = {d.passages: d for d in progress.decades}
    report = ScaleBenchReport()
    for size in decade_sizes(passages, progress.first_decade):
        if size in finished:
            report.decades.append(finished[size])
            continue
        if progress.current is None:
            progress.current = DecadeProgress(passages=size)
        else:  # a stopped run's decade, carried on (to a larger size when more passages are asked for now)
            progress.current = progress.current.model_copy(update={"passages": size,
                                                                   "runs": progress.current.runs + 1})
        decade = progress.current
        decade.server_memory.append(ServerMemory(heap=server.settings.heap, pagecache=server.settings.pagecache))
        _ingest(graph, embedder, settings, bench, decade, size, batch, say)
        if not decade.distilled:
            with _DistillClock(bench, decade, cpu, say) as clock:
                distilled = distill(graph, embedder, llm, layers=EVAL_LAYERS, progress=clock.layer)
                clock.finish({name: layer.seconds for name, layer in distilled.layers.items()})
            decade.distilled = True
            bench.save()
        say(f"{size} passages: distilled in {decade.distill_seconds:.1f} s ({decade.layer_seconds})")
        started = time.perf_counter()
        graph.write("meta/await_indexes", timeout_s=3600)
        index_s = time.perf_counter() - started
        settling = cpu.read()["server"]
        settle_s, quiet = await_quiet(server_pid)
        settle_cpu_s = cpu.read()["server"] - settling
        if not quiet:
            say(f"{size} passages: the server still busy after {settle_s:.0f} s; timing the queries anyway")
        first_texts, texts = _decade_queries(size, queries, f"first:{size}"), _decade_queries(size, queries, size)
        (first_round, latencies), unavailable = method_latencies(
            graph, embedder, llm, [first_texts, texts], k=k, methods=methods, warmup=warmup,
            progress=partial(_say_at, say, size))
        exact = exact_latency(bench.vectors.matrix(), embedder, texts, k=k, warmup=warmup)
        client_mb, server_mb = rss.take()
        store_bytes = _folder_bytes(server.data_dir)
        by_process = _per_chunk(decade.cpu_seconds, decade.chunks)
        report.decades.append(DecadeReport(
            passages=size, ingest_chunks_per_s=round(decade.chunks / decade.ingest_seconds, 1),
            distill_chunks_per_s=round(decade.chunks / decade.distill_seconds, 1),
            distill_layer_seconds=decade.layer_seconds, index_seconds=round(index_s, 4),
            settle_seconds=round(settle_s, 1), settle_cpu_ms_per_chunk=round(settle_cpu_s * 1000 / decade.chunks, 3),
            distill_cpu_ms_per_chunk=round(sum(by_process.values()), 3),
            distill_cpu_ms_per_chunk_by_process=by_process,
            distill_layer_cpu_ms_per_chunk={name: _per_chunk(s, decade.chunks)
                                            for name, s in decade.layer_cpu_seconds.items()},
            store_mb=round(store_bytes / 2**20, 1),
            store_bytes_per_chunk=round(store_bytes / bench.vectors.rows),  # a row per chunk stored
            client_peak_mb=max(client_mb, decade.client_peak_mb),
            server_peak_mb=max(server_mb, decade.server_peak_mb), query=latencies, query_first_round=first_round,
            numpy_exact=exact,
            runs=decade.runs, server_memory=decade.server_memory, unavailable=unavailable))
        progress.decades.append(report.decades[-1])
        progress.current = None
        bench.save()
        say(report.decades[-1].model_dump_json(exclude={"unavailable"}))
    return report
