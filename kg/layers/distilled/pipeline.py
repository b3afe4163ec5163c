"""The distillation job: pending chunks per layer, in batches of whole documents, one transaction each.

A layer whose batches do not read what earlier batches wrote (``Layer.independent_batches``: atoms, table
rows) builds its next batch while the previous one commits on another session; the others (entity
resolution reads the entities the previous batch created) wait for each commit before building on.

The job picks the mode once: without an LLM (:class:`~kg.llm.OfflineLLM`) every layer gets its offline
extractor, else its LLM one (:mod:`kg.layers.distilled.extractors`).

Example::

    report = distill(store, embedder, llm, layers=["atoms", "triples"], document_ids=None)
    print(report.layers["atoms"].created, report.llm)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

from kg.embeddings import Embedder
from kg.errors import ConfigError
from kg.layers.distilled.atoms import AtomsLayer
from kg.layers.distilled.base import Built, Context, Layer, Progress
from kg.layers.distilled.extractors import Extractors, LLMExtractors, OfflineExtractors
from kg.layers.distilled.models import ALL_LAYERS, ChunkRecord, DistillConfig, DistillReport, LayerReport
from kg.layers.distilled.pseudograph import PseudoGraphLayer
from kg.layers.distilled.tables import TablesLayer
from kg.layers.distilled.tags import TagsLayer
from kg.layers.distilled.triples import TriplesLayer
from kg.llm import LLM, OfflineLLM
from kg.store.base import GraphStore
from kg.store.queries import PENDING_CHUNKS

__all__ = ["DEFAULT_LAYERS_LLM", "DEFAULT_LAYERS_OFFLINE", "default_layers", "distill", "llm_tasks_of", "parse_layers"]

DEFAULT_LAYERS_OFFLINE: tuple[str, ...] = ("atoms", "triples", "tables")
# Tags cost one call per chunk and make query-time expansion possible; the pseudo-graph is opt-in
# (two calls per chunk plus one per document).
DEFAULT_LAYERS_LLM: tuple[str, ...] = ("atoms", "triples", "tables", "tags")
_LAYERS: dict[str, type[Layer]] = {
    "atoms": AtomsLayer, "triples": TriplesLayer, "tables": TablesLayer, "tags": TagsLayer,
    "pseudograph": PseudoGraphLayer,
}
# Each layer with the extractor of the job's mode.
_MAKE: dict[str, Callable[[Context, Extractors], Layer]] = {
    "atoms": lambda ctx, ex: AtomsLayer(ctx, ex.atoms(ctx)),
    "triples": lambda ctx, ex: TriplesLayer(ctx, ex.triples(ctx)),
    "tables": lambda ctx, ex: TablesLayer(ctx),
    "tags": lambda ctx, ex: TagsLayer(ctx, ex.tags(ctx)),
    "pseudograph": lambda ctx, ex: PseudoGraphLayer(ctx, ex.fact_items(ctx)),
}


def default_layers(offline: bool) -> list[str]:
    return list(DEFAULT_LAYERS_OFFLINE if offline else DEFAULT_LAYERS_LLM)


def llm_tasks_of(layers: Sequence[str]) -> tuple[str, ...]:
    """The per-chunk LLM tasks of these layers, in order, for token estimates."""
    return tuple(task for name in layers for task in _LAYERS[name].llm_tasks)


def parse_layers(text: str | Sequence[str] | None) -> list[str] | None:
    """``"atoms,triples"`` or a list -> validated layer names (None stays None: the defaults)."""
    if text is None:
        return None
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = sorted(set(names) - set(ALL_LAYERS))
    if unknown:
        raise ConfigError(f"unknown distillation layer(s) {unknown}: choose from {', '.join(ALL_LAYERS)}")
    return names


def _batches(chunks: Sequence[ChunkRecord], size: int) -> Iterator[list[ChunkRecord]]:
    """Batches of about ``size`` chunks that never split a document (chunks come sorted by document)."""
    batch: list[ChunkRecord] = []
    for i, chunk in enumerate(chunks):
        batch.append(chunk)
        last_of_doc = i + 1 == len(chunks) or chunks[i + 1].document_id != chunk.document_id
        if len(batch) >= size and last_of_doc:
            yield batch
            batch = []
    if batch:
        yield batch


_InFlight = tuple[Future[None], Built] | None


def _settle(entry: LayerReport, in_flight: _InFlight) -> None:
    """Wait for a batch's commit (re-raising its error), then count it."""
    if in_flight is not None:
        write, built = in_flight
        write.result()
        entry.add(built.counts)


def distill(
    store: GraphStore,
    embedder: Embedder,
    llm: LLM,
    *,
    layers: Sequence[str] | None = None,
    document_ids: Sequence[str] | None = None,
    progress: Progress | None = None,
    batch_size: int = 500,
    config: DistillConfig | None = None,
    force: bool = False,
    retry_failed: bool = True,
) -> DistillReport:
    """Distil the loaded chunks (of ``document_ids``, or all) into ``layers`` and return the report.

    Chunks already distilled for a layer are skipped unless ``force``; a run that stopped (an error, an
    interrupt, an LLM outage) resumes where it stopped. ``progress(layer, done, total)`` is called after
    each batch. An LLM that is down or out of budget stops the job after the current batch is written.
    A chunk whose LLM task finally failed (invalid or truncated output) fails alone: it is recorded on the
    chunk (``distill_failed``) and in the report, and tried again only when ``retry_failed`` (``strata
    distill`` does; the distillation at the end of ``strata load`` does not, so a re-load costs no call).
    """
    started = time.perf_counter()
    offline = isinstance(llm, OfflineLLM)  # the one place the mode is decided
    extractors: Extractors = OfflineExtractors() if offline else LLMExtractors()
    chosen = parse_layers(layers) or default_layers(offline)
    ctx = Context(store, embedder, llm, config or DistillConfig())
    docs = list(document_ids) if document_ids is not None else None
    if force:
        store.write("distill/unmark_chunks", document_ids=docs, layers=chosen)
    report = DistillReport(offline=offline)
    for name in (n for n in ALL_LAYERS if n in chosen):
        layer = _MAKE[name](ctx, extractors)
        layer_started = time.perf_counter()
        rows = store.read(PENDING_CHUNKS, layer=name, document_ids=docs, retry_failed=retry_failed)
        chunks = [ChunkRecord(r["id"], r["document_id"], r["text"] or "", r["title"], r["order"], r["summary"])
                  for r in rows]
        entry = report.layers[name] = LayerReport(pending=len(chunks), method=layer.method)
        layer.prepare(chunks)
        done = 0
        in_flight: _InFlight = None
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="distill-write") as writer:
            for batch in _batches(chunks, batch_size):
                built = layer.build(batch)
                _settle(entry, in_flight)
                in_flight = None
                if built.done:
                    in_flight = (writer.submit(store.atomic, partial(layer.write, built=built, batch=batch)), built)
                    if not layer.independent_batches:
                        _settle(entry, in_flight)
                        in_flight = None
                entry.chunks += len(built.done)
                entry.failed += built.failed
                if built.failed:
                    store.write("distill/mark_failed", ids=[f.id for f in built.failed], layer=name)
                entry.llm_seconds += built.llm_seconds
                done += len(batch)
                if progress is not None:
                    progress(name, done, len(chunks))
                if built.fatal is not None:
                    report.stopped = f"{name}: {str(built.fatal).splitlines()[0]}"
                    break
            _settle(entry, in_flight)
        entry.add(layer.finish())
        entry.seconds = round(time.perf_counter() - layer_started, 4)
        entry.llm_seconds = round(entry.llm_seconds, 4)
        if report.stopped:
            break
    report.llm = llm.accounting.report()
    report.seconds = round(time.perf_counter() - started, 4)
    return report
