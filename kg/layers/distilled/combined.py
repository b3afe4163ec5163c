"""One LLM call per chunk for the atoms, triples and tags layers of a job (the LLM default).

When a job builds atoms and triples together, a :class:`SharedCallLayer` step runs before their own passes: it
claims batches of the chunks the atoms layer has still to distil (the leases, cursor and resume of every layer,
:mod:`kg.layers.distilled.claims`), makes one call per chunk (``chunk_knowledge``: questions, triples and tags;
``atoms_triples`` when the job has no tags layer), and builds each covered layer from the replies with that
layer's own code (:class:`~kg.layers.distilled.atoms.AtomsLayer`, :class:`~kg.layers.distilled.triples.
TriplesLayer` with entity resolution under the job-wide serial lock, :class:`~kg.layers.distilled.tags.
TagsLayer` with the aliases of new tags). The batch's write writes every covered layer and marks the chunks
done for each of them in one transaction, so the layers' own passes that follow find nothing pending and make
no call; they still pick up a chunk the step did not reach (one distilled for atoms but not for triples by an
earlier job), with their own tasks. Nothing is kept across batches: memory stays bounded however large the
corpus. A chunk whose call failed is marked failed in every covered layer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kg.layers.distilled.atoms import AtomsLayer
from kg.layers.distilled.base import Built, Context, Layer, written
from kg.layers.distilled.extractors.protocols import KnowledgeExtractor
from kg.layers.distilled.models import ChunkRecord, LayerName
from kg.layers.distilled.resolve import ENTITY_BLOCKS
from kg.layers.distilled.stored_keys import ensure_stored_keys
from kg.layers.distilled.tags import TagsLayer
from kg.layers.distilled.triples import TriplesLayer
from kg.store.base import Transaction

__all__ = ["SHARED_LAYERS", "SharedBuilt", "SharedCallLayer", "shared_layers", "shared_task"]

SHARED_LAYERS: tuple[LayerName, ...] = ("atoms", "triples", "tags")
"""The layers one call per chunk can serve, in run order."""


def shared_layers(chosen: Sequence[str]) -> tuple[LayerName, ...]:
    """The layers of ``chosen`` that share one call per chunk: atoms and triples (and tags when chosen) when
    both are chosen, else none (a layer chosen alone keeps its own task).

    >>> shared_layers(["atoms", "triples", "tables", "tags"]), shared_layers(["atoms", "tags"])
    (('atoms', 'triples', 'tags'), ())
    """
    covered = tuple(name for name in SHARED_LAYERS if name in chosen)
    return covered if {"atoms", "triples"} <= set(covered) else ()


def shared_task(chosen: Sequence[str]) -> str | None:
    """The task of the shared call for ``chosen`` layers (None when they do not share one).

    >>> shared_task(["atoms", "triples"]), shared_task(["atoms", "triples", "tags"]), shared_task(["atoms"])
    ('atoms_triples', 'chunk_knowledge', None)
    """
    covered = shared_layers(chosen)
    if not covered:
        return None
    return "chunk_knowledge" if "tags" in covered else "atoms_triples"


@dataclass
class SharedBuilt(Built):
    """A batch of the shared step: each covered layer's part (``parts``) and the layer that writes it."""

    layers: dict[str, Layer[Built]] = field(default_factory=dict)


def _once(action: Callable[[], None]) -> Callable[[], None]:
    """``action`` the first time, nothing after: the batch's covered layers wait for the previous write and take
    the serial lock once."""
    done = False

    def run() -> None:
        nonlocal done
        if not done:
            done = True
            action()

    return run


class SharedCallLayer(Layer[SharedBuilt]):
    """The shared step (see the module docstring). Its ``name`` is the layer whose pending chunks it claims
    (atoms); ``covers`` names every layer it builds; it is ``serial`` because the triples layer is."""

    serial = True

    def __init__(self, ctx: Context, knowledge: KnowledgeExtractor, covers: Sequence[LayerName]) -> None:
        super().__init__(ctx)
        self.knowledge = knowledge
        self.covers = tuple(covers)
        self.name = self.covers[0]

    @property
    def label(self) -> str:
        return "+".join(self.covers)

    @property
    def method(self) -> str:
        return self.knowledge.method

    def prepare(self) -> None:
        ensure_stored_keys(self.ctx.store, ENTITY_BLOCKS)  # the triples it builds resolve entities by these keys

    def build(self, chunks: Sequence[ChunkRecord], *, previous_written: Callable[[], None] = written) -> SharedBuilt:
        built = SharedBuilt()
        shared = self.knowledge.extract(chunks, built, self.covers)
        layers: dict[str, Layer[Built]] = {"atoms": AtomsLayer(self.ctx, shared.atoms),
                                    "triples": TriplesLayer(self.ctx, shared.triples)}
        if "tags" in self.covers and shared.tags is not None:
            layers["tags"] = TagsLayer(self.ctx, shared.tags)
        before = _once(previous_written)  # the triples layer's resolution reads what earlier batches wrote
        for name, layer in layers.items():
            part = layer.build(shared.chunks, previous_written=before)
            built.parts[name], built.layers[name] = part, layer
            built.failed += part.failed
            built.fatal = built.fatal or part.fatal
        built.done = [c.id for c in shared.chunks]
        return built

    def write(self, tx: Transaction, built: SharedBuilt, batch: Sequence[ChunkRecord]) -> None:
        """Every covered layer's write (lock, clear, write, mark) in the one transaction."""
        for name, part in built.parts.items():
            built.layers[name].write(tx, part, batch)
