"""What every layer shares: the run context, the built-but-unwritten batch, the atomic batch write, and
concurrent LLM calls that turn bad output into a per-chunk failure instead of a half-written chunk.

How a layer extracts (with the LLM or offline) is its extractor strategy, chosen once when the job starts
(:mod:`kg.layers.distilled.extractors`); the layers themselves never ask which mode they run in.

A layer builds a batch (LLM calls, embeddings, resolution: everything that can fail) before anything is
written; :meth:`Layer.write` then locks the batch's chunks, clears what an earlier run left for them, writes
the new nodes and marks the chunks done, all in one transaction. A chunk is therefore either fully
distilled for a layer (and marked) or untouched, and a re-run skips marked chunks: the job resumes without
duplicates. The job builds the next batch while the previous one is written; a layer whose build reads
what earlier batches wrote (entity resolution, existing tags) calls ``previous_written`` first, after its
extraction, so the extraction (the LLM calls) still overlaps the previous batch's write.
"""

from __future__ import annotations

import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from kg.embeddings import Embedder
from kg.errors import BudgetExceededError, LLMError, LLMUnavailableError
from kg.layers.distilled.models import ChunkFailure, ChunkRecord, DistillConfig, LayerName
from kg.llm import LLM, Task
from kg.store.base import GraphStore, Transaction, embedding_listed

__all__ = ["Built", "Context", "LLMOutcome", "Layer", "short_hash", "written"]

T = TypeVar("T", bound=BaseModel)


def short_hash(*parts: str, n: int = 12) -> str:
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:n]


@dataclass
class Context:
    """The injected services of one distillation job."""

    store: GraphStore
    embedder: Embedder
    llm: LLM
    config: DistillConfig


@dataclass
class LLMOutcome(Generic[T]):
    """The results of a group of calls, in order (None where a call failed), and the time they took."""

    results: list[T | None]
    errors: dict[int, LLMError] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def fatal(self) -> LLMError | None:
        """An error that will fail every later call too (endpoint down, budget spent): stop the job."""
        return next((e for e in self.errors.values() if isinstance(e, (LLMUnavailableError, BudgetExceededError))),
                    None)


def call_many(ctx: Context, task: Task[T], fields: Sequence[dict[str, str]], *,
              temperature: float | None = None) -> LLMOutcome[T]:
    """Run one task over many inputs with ``llm_concurrency`` calls in flight (the client bounds the
    endpoint's concurrency too); each input's prompt is in its detected language."""

    def one(values: dict[str, Any]) -> T:
        return ctx.llm.run(task, temperature=temperature, **values)

    started = time.perf_counter()
    outcome: LLMOutcome[T] = LLMOutcome([None] * len(fields))
    with ThreadPoolExecutor(max_workers=max(1, ctx.config.llm_concurrency)) as pool:
        futures = [pool.submit(one, f) for f in fields]
        for i, future in enumerate(futures):
            try:
                outcome.results[i] = future.result()
            except LLMError as exc:
                outcome.errors[i] = exc
    outcome.seconds = time.perf_counter() - started
    return outcome


@dataclass
class Built:
    """A batch ready to write: rows per named query, the chunks it completes, and what failed."""

    done: list[str] = field(default_factory=list)
    rows: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    failed: list[ChunkFailure] = field(default_factory=list)
    llm_seconds: float = 0.0
    fatal: LLMError | None = None
    # A step that builds several layers from one call per chunk (kg.layers.distilled.combined): each layer's
    # own part, by layer name (``failed`` and ``llm_seconds`` above are the step's, for all of them).
    parts: dict[str, Built] = field(default_factory=dict)

    def fail(self, layer: str, ids: Sequence[str], error: Exception) -> None:
        message = str(error).splitlines()[0][:300] if str(error) else type(error).__name__
        self.failed.extend(ChunkFailure(layer=layer, id=i, error=message) for i in ids)

    def absorb(self, outcome: LLMOutcome[Any]) -> None:
        self.llm_seconds += outcome.seconds
        self.fatal = self.fatal or outcome.fatal


def written() -> None:
    """``previous_written`` of a build with no earlier batch in flight."""


B = TypeVar("B", bound="Built")


class Layer(ABC, Generic[B]):
    """One distilled layer, whose :meth:`build` makes the ``B`` its :meth:`write` takes (a plain
    :class:`Built`, or a richer batch such as the shared call's). ``clear`` names queries taking ``$ids`` (the
    batch's chunk ids) that remove what an earlier run wrote for them; ``stale`` names
    layers whose output depends on this one and must run again on the chunks it rewrites."""

    name: LayerName
    clear: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    # A layer whose unit is a document part (its chunks of the same ``order // part_chunks``) rather than a
    # chunk: its batches are whole parts (claims.Claims).
    part_chunks: int | None = None
    # True when a batch's build reads what earlier batches wrote (after ``previous_written``): with several
    # workers, that read and the batch's write then hold the job-wide lock (claims.SerialLock).
    serial: bool = False
    # The LLM tasks the layer runs about once per chunk: what `strata load --estimate` counts for it.
    llm_tasks: tuple[str, ...] = ()

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def label(self) -> str:
        """The name progress is reported under."""
        return self.name

    @property
    @abstractmethod
    def method(self) -> str:
        """How the layer extracts, as the report names it (``llm``, ``offline (...)``, ``rules``)."""

    @abstractmethod
    def build(self, chunks: Sequence[ChunkRecord], *, previous_written: Callable[[], None] = written) -> B:
        """Everything that can fail, for whole chunks (whole document parts with ``part_chunks``). A build that
        reads what earlier batches write calls ``previous_written()`` before that read: it returns once they
        are committed (and raises their error)."""

    def write(self, tx: Transaction, built: B, batch: Sequence[ChunkRecord]) -> None:
        """Lock, clear, write and mark in the caller's transaction (retried whole by the driver)."""
        tx.run("distill/lock_chunks", ids=built.done)
        for name in self.clear:
            tx.run(name, ids=built.done)
        for name, rows in built.rows:
            tx.run_batches(name, rows, batch_size=2000, encode=embedding_listed)
        tx.run("distill/mark_chunks", ids=built.done, layer=self.name, stale=list(self.stale))

    def prepare(self) -> None:
        """Work before the run's first batch is claimed: giving the lookup keys a newer Strata reads to the nodes
        an older one wrote (kg.layers.distilled.stored_keys). Done here, while the run has written nothing, a
        graph that already holds them pays one read, where a check after the run's writes pages through them."""

    def finish(self) -> dict[str, int]:
        """Work once the run's batches have committed (cross-document fusion, including what an earlier
        run left pending); returns extra counts. It runs even when no chunk was pending."""
        return {}


Progress = Callable[[str, int, int], None]
"""``progress(layer, done, total)``: after each batch, the chunks this run finished of the layer's pending."""


class Extracting(Protocol):
    @property
    def method(self) -> str: ...


E = TypeVar("E", bound=Extracting)


class ExtractorLayer(Layer[Built], Generic[E]):
    """A layer whose extraction is its strategy's (LLM or offline, chosen once by the pipeline)."""

    def __init__(self, ctx: Context, extractor: E) -> None:
        super().__init__(ctx)
        self.extractor = extractor

    @property
    def method(self) -> str:
        return self.extractor.method
