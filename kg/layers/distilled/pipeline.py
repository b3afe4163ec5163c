"""The distillation job: per layer, batches of pending chunks claimed from the graph, one transaction each.

Bounded memory: a batch is claimed from Neo4j a page of chunk ids at a time (:class:`~kg.layers.distilled.
claims.Claims`), so a document of any size is distilled in batches of ``batch_size`` chunks and at most
``DistillConfig.batch_chars`` of their text (with an LLM, a few times the calls in flight, so progress and
leases move often), each written in its own transaction, and at most three batches are in memory: one
written, one built, one claimed. Chunks are marked in the
transaction that writes their nodes, so a killed run resumes where it stopped, and several workers
(``strata distill`` processes over one graph) split the pending chunks between them through leases.

Throughput: the next batch is built (its LLM calls sent) while the previous one is written; a layer whose
build reads what earlier batches wrote (entity resolution) waits for that write only after its extraction
(``previous_written``), so the endpoint keeps working while the graph does. Such a ``serial`` layer also
holds a job-wide lock from that read to its write's commit, so several workers resolve as one does.

The job picks the mode once: without an LLM (:class:`~kg.llm.OfflineLLM`) every layer gets its offline
extractor, else its LLM one (:mod:`kg.layers.distilled.extractors`). With an LLM, atoms and triples chosen
together (and tags with them) cost one call per chunk: a shared step runs before their own passes, builds all
of them per batch and marks each (:mod:`kg.layers.distilled.combined`), so their passes find nothing left.

Example::

    report = distill(store, embedder, llm, layers=["atoms", "triples"], document_ids=None)
    print(report.layers["atoms"].created, report.llm)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

from kg.embeddings import Embedder
from kg.errors import ConfigError
from kg.layers.distilled.atoms import AtomsLayer
from kg.layers.distilled.base import B, Built, Context, Layer, Progress, written
from kg.layers.distilled.claims import Claims, SerialLock, new_owner
from kg.layers.distilled.combined import SharedCallLayer, shared_layers, shared_task
from kg.layers.distilled.extractors import Extractors, LLMExtractors, OfflineExtractors
from kg.layers.distilled.models import (
    ALL_LAYERS,
    DISTILL_BATCH_CHUNKS,
    ChunkRecord,
    DistillConfig,
    DistillReport,
    LayerReport,
)
from kg.layers.distilled.pseudograph import PseudoGraphLayer
from kg.layers.distilled.tables import TablesLayer
from kg.layers.distilled.tags import TagsLayer
from kg.layers.distilled.triples import TriplesLayer
from kg.llm import LLM, OfflineLLM
from kg.store.base import GraphStore, Transaction

__all__ = [
    "DEFAULT_LAYERS_LLM", "DEFAULT_LAYERS_OFFLINE", "default_layers", "distill",
    "llm_batch_size", "llm_tasks_of", "parse_layers",
]

DEFAULT_LAYERS_OFFLINE: tuple[str, ...] = ("atoms", "triples", "tables")
# Atoms, triples and tags share one call per chunk (kg.layers.distilled.combined); tags make query-time
# expansion possible. The pseudo-graph is opt-in (one or two calls per chunk plus one per document).
DEFAULT_LAYERS_LLM: tuple[str, ...] = ("atoms", "triples", "tables", "tags")
_LAYERS: dict[str, type[Layer[Built]]] = {
    "atoms": AtomsLayer, "triples": TriplesLayer, "tables": TablesLayer, "tags": TagsLayer,
    "pseudograph": PseudoGraphLayer,
}
# Each layer with the extractor of the job's mode.
_MAKE: dict[str, Callable[[Context, Extractors], Layer[Built]]] = {
    "atoms": lambda ctx, ex: AtomsLayer(ctx, ex.atoms(ctx)),
    "triples": lambda ctx, ex: TriplesLayer(ctx, ex.triples(ctx)),
    "tables": lambda ctx, ex: TablesLayer(ctx),
    "tags": lambda ctx, ex: TagsLayer(ctx, ex.tags(ctx)),
    "pseudograph": lambda ctx, ex: PseudoGraphLayer(ctx, ex.fact_items(ctx)),
}


def default_layers(offline: bool) -> list[str]:
    return list(DEFAULT_LAYERS_OFFLINE if offline else DEFAULT_LAYERS_LLM)


def llm_tasks_of(layers: Sequence[str]) -> tuple[str, ...]:
    """The LLM tasks these layers run about once per chunk with an LLM, in run order, for call and token
    estimates: the shared call of atoms, triples and tags when they share one, then the other layers' own.

    >>> llm_tasks_of(["atoms", "triples"]), llm_tasks_of(["atoms"]), llm_tasks_of(["tags", "pseudograph"])
    (('atoms_triples',), ('atomic_questions',), ('chunk_tags', 'fact_items', 'mind_map'))
    """
    shared, covered = shared_task(layers), shared_layers(layers)
    own = (task for name in ALL_LAYERS if name in layers and name not in covered for task in _LAYERS[name].llm_tasks)
    return (*([shared] if shared else []), *own)


def parse_layers(text: str | Sequence[str] | None) -> list[str] | None:
    """``"atoms,triples"`` or a list -> validated layer names (None stays None: the defaults)."""
    if text is None:
        return None
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = sorted(set(names) - set(ALL_LAYERS))
    if unknown:
        raise ConfigError(f"unknown distillation layer(s) {unknown}: choose from {', '.join(ALL_LAYERS)}")
    return names


# The chunks per batch with an LLM: this many times the calls in flight, so a batch's last calls are a small
# part of it while each batch still ends (progress, leases, a resumable mark) within minutes.
_LLM_BATCH_PER_CALL = 4


def llm_batch_size(batch_size: int, llm_concurrency: int) -> int:
    """The chunks per batch of a job with an LLM: ``batch_size``, at most a few times the calls in flight.

    >>> llm_batch_size(1000, 4), llm_batch_size(10, 8)
    (16, 10)
    """
    return max(1, min(batch_size, _LLM_BATCH_PER_CALL * llm_concurrency))


def _run_layer(layer: Layer[B], claims: Claims, lock: SerialLock | None, entries: dict[str, LayerReport],
               store: GraphStore, progress: Progress | None, total: int) -> str | None:
    """Claim, build and write the layer's batches until none is left; returns why it stopped early (an
    endpoint down or a budget spent), or None. ``lock``: the job-wide lock of a ``serial`` layer; ``entries``:
    the report of each layer the step builds (one, or every layer a shared call covers); ``total``: the
    chunks pending when it started."""
    done = 0
    stopped: str | None = None
    if progress is not None:
        progress(layer.label, 0, total)
    with (ThreadPoolExecutor(max_workers=1, thread_name_prefix="distill-build") as builder,
          ThreadPoolExecutor(max_workers=1, thread_name_prefix="distill-write") as writer):
        writes: list[tuple[Future[None], B]] = []

        def build(batch: list[ChunkRecord], before: Future[None] | None) -> B:
            def previous_written() -> None:
                if before is not None:
                    before.result()
                if lock is not None:
                    lock.acquire()  # given back by this batch's write

            return layer.build(batch, previous_written=previous_written if layer.serial else written)

        def write(tx: Transaction, built: B, batch: list[ChunkRecord]) -> None:
            layer.write(tx, built, batch)
            if lock is not None:
                lock.release_in(tx)

        batch = claims.next()
        building = builder.submit(build, batch, None) if batch else None
        while building is not None:
            built = building.result()
            if built.done:
                writes.append((writer.submit(store.atomic, partial(write, built=built, batch=batch)), built))
            elif lock is not None:
                lock.release()  # nothing to write: the lock goes back at once
            if built.failed:
                for name in dict.fromkeys(f.layer for f in built.failed):
                    store.write("distill/mark_failed", ids=[f.id for f in built.failed if f.layer == name],
                                layer=name)
                claims.failed([f.id for f in built.failed])
            _account(entries, layer.name, built)
            if built.fatal is not None:
                stopped = f"{layer.label}: {str(built.fatal).splitlines()[0]}"
                break
            # The next batch is claimed and its build started before this one's write is waited for; at most
            # this write and the one before it are queued, so a slow server does not pile batches up here.
            while len(writes) > 1:
                _settle(entries, layer.name, writes.pop(0))
            batch = claims.next()
            building = builder.submit(build, batch, writes[-1][0] if writes else None) if batch else None
            done += len(built.done) + len({f.id for f in built.failed})
            if progress is not None:
                progress(layer.label, done, max(total, done))
        for queued in writes:
            _settle(entries, layer.name, queued)
    return stopped


def _parts(name: str, built: Built) -> dict[str, Built]:
    """What a batch built per layer: its parts (a shared call's), or itself for the layer ``name``."""
    return built.parts or {name: built}


def _account(entries: dict[str, LayerReport], name: str, built: Built) -> None:
    """Count a built batch's chunks, failures and LLM time in each layer's entry (a shared call's time split
    evenly between the layers it served)."""
    parts = _parts(name, built)
    shared = built.llm_seconds / len(parts) if built.parts else 0.0
    for layer, part in parts.items():
        entry = entries[layer]
        entry.chunks += len(part.done)
        entry.failed += [f for f in built.failed if f.layer == layer]
        entry.llm_seconds += shared + part.llm_seconds


def _settle(entries: dict[str, LayerReport], name: str, write: tuple[Future[None], Built]) -> None:
    """Wait for a batch's commit (re-raising its error), then count what it wrote."""
    future, built = write
    future.result()
    for layer, part in _parts(name, built).items():
        entries[layer].add(part.counts)


def distill(
    store: GraphStore,
    embedder: Embedder,
    llm: LLM,
    *,
    layers: Sequence[str] | None = None,
    document_ids: Sequence[str] | None = None,
    progress: Progress | None = None,
    batch_size: int | None = None,
    config: DistillConfig | None = None,
    force: bool = False,
    retry_failed: bool = True,
) -> DistillReport:
    """Distil the loaded chunks (of ``document_ids``, or all) into ``layers`` and return the report.

    Chunks already distilled for a layer are skipped unless ``force``; a run that stopped (an error, an
    interrupt, an LLM outage) resumes where it stopped; other workers running at the same time take other
    chunks. ``progress(layer, done, total)`` is called when a layer starts and after each batch. An LLM
    that is down or out of budget stops the job after the current batch is written.
    A chunk whose LLM task finally failed (invalid or truncated output) fails alone: it is recorded on the
    chunk (``distill_failed``) and in the report, and tried again only when ``retry_failed`` (``strata
    distill`` does; the distillation at the end of ``strata load`` does not, so a re-load costs no call).
    """
    started = time.perf_counter()
    offline = isinstance(llm, OfflineLLM)  # the one place the mode is decided
    extractors: Extractors = OfflineExtractors() if offline else LLMExtractors()
    chosen = parse_layers(layers) or default_layers(offline)
    cfg = config or DistillConfig()
    ctx = Context(store, embedder, llm, cfg)
    docs = list(document_ids) if document_ids is not None else None
    if force:
        store.write("distill/unmark_chunks", document_ids=docs, layers=chosen)
    chunks = batch_size or DISTILL_BATCH_CHUNKS
    size = chunks if offline else llm_batch_size(chunks, cfg.llm_concurrency)
    owner = new_owner()
    report = DistillReport(offline=offline)
    covers = shared_layers(chosen)
    knowledge = extractors.knowledge(ctx, "tags" in covers) if covers else None
    steps: list[Layer[Any]] = []  # steps build different batch types; each one's build and write agree
    for name in (n for n in ALL_LAYERS if n in chosen):
        if knowledge is not None and name == covers[0]:
            steps.append(SharedCallLayer(ctx, knowledge, covers))  # before the layers it covers
        steps.append(_MAKE[name](ctx, extractors))

    def claims_of(name: str, part_chunks: int | None = None) -> Claims:
        return Claims(store, name, owner, size, document_ids=docs, retry_failed=retry_failed,
                      part_chunks=part_chunks, chars=cfg.batch_chars, lease_seconds=cfg.lease_seconds)

    for layer in steps:
        step_started = time.perf_counter()
        shared = isinstance(layer, SharedCallLayer)
        names: tuple[str, ...] = layer.covers if isinstance(layer, SharedCallLayer) else (layer.name,)
        fresh = [n for n in names if n not in report.layers]
        for key in fresh:
            report.layers[key] = LayerReport(method=layer.method)
            report.layers[key].pending = claims_of(key).pending()
        entries = {n: report.layers[n] for n in names}
        claims = claims_of(layer.name, layer.part_chunks)
        total = report.layers[layer.name].pending if layer.name in fresh else claims.pending()
        lock = SerialLock(store, owner, cfg.lease_seconds) if layer.serial else None
        layer.prepare()
        try:
            # A layer a shared call covered has nothing left but what the call did not reach: no progress line
            # for an empty pass.
            quiet = not shared and not fresh and total == 0
            report.stopped = _run_layer(layer, claims, lock, entries, store, None if quiet else progress, total)
        finally:
            claims.release()
            if lock is not None:
                lock.release()
        if not shared:
            report.layers[layer.name].add(layer.finish())
        seconds = (time.perf_counter() - step_started) / len(names)
        for entry in entries.values():
            entry.seconds = round(entry.seconds + seconds, 4)
            entry.llm_seconds = round(entry.llm_seconds, 4)
        if report.stopped:
            break
    report.layers = {n: report.layers[n] for n in ALL_LAYERS if n in report.layers}  # in run order
    report.llm = llm.accounting.report()
    report.seconds = round(time.perf_counter() - started, 4)
    return report
