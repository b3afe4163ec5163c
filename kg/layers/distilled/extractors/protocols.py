"""What each distillation layer asks of its extractor, one small protocol per layer, and the factory of a mode.

A layer takes its extractor when it is constructed and never asks which mode it runs in; the job picks the
mode's :class:`Extractors` once (:func:`kg.layers.distilled.pipeline.distill`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kg.layers.distilled.base import Built, Context
from kg.layers.distilled.models import ChunkExtraction, ChunkRecord

__all__ = [
    "ROUTE_SEP",
    "AtomExtractor",
    "Extractors",
    "FactItemExtractor",
    "KnowledgeExtractor",
    "MindMapOutline",
    "SharedExtraction",
    "TagExtractor",
    "TripleExtractor",
    "VerifiedItem",
]

ROUTE_SEP = " > "
"""Joins a pseudo-graph path's parts: topic > route > ... > fact."""

MindMapOutline = tuple[str, list[tuple[str, ...]]]
"""A document part's mind map: its topic and the leaf route paths under it."""


class AtomExtractor(Protocol):
    """The atoms of each chunk: atomic questions (LLM) or atomic statements (offline)."""

    @property
    def method(self) -> str:
        """The layer's method in the report."""
        ...

    @property
    def kind(self) -> str:
        """``Atom.kind``: ``question`` or ``statement``."""
        ...

    @property
    def source(self) -> str:
        """``Atom.source``: ``llm`` or ``offline``."""
        ...

    def atoms(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, list[str]]]:
        """The atom texts of each chunk that succeeded (failures are recorded in ``built``)."""
        ...


class TripleExtractor(Protocol):
    """The entities and typed triples each chunk names."""

    @property
    def method(self) -> str: ...

    @property
    def source(self) -> str:
        """``source`` of the facts and new entities: ``llm`` or ``offline``."""
        ...

    def triples(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, ChunkExtraction]]:
        """The extraction of each chunk that succeeded (failures are recorded in ``built``)."""
        ...


class TagExtractor(Protocol):
    """Tags per chunk (class, value) and colloquial aliases of new tags."""

    @property
    def method(self) -> str: ...

    @property
    def source(self) -> str: ...

    def prepare(self, chunks: Sequence[ChunkRecord]) -> None:
        """Run-level work before the first batch (tag classes, corpus statistics)."""
        ...

    def tags(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, list[tuple[str, str]]]]:
        """The (class, value) tags of each chunk that succeeded."""
        ...

    def aliases(self, names: list[str], built: Built) -> dict[str, list[str]]:
        """Colloquial aliases of the tags named ``names``, keyed by the tag's ``name_key``."""
        ...


@dataclass(frozen=True)
class VerifiedItem:
    """A fact item accepted for ``chunk``, with its ROUGE-L precision and cosine against the chunk."""

    chunk: ChunkRecord
    text: str
    rouge: float
    similarity: float


class FactItemExtractor(Protocol):
    """The PG-RAG pseudo-graph's verified fact items, each document part's mind map, and where items hang in it
    (a part: a document's chunks of the same ``order // MIND_MAP_CHUNKS``, all of a document of up to 500)."""

    @property
    def method(self) -> str:
        """The layer's method in the report, also the ``source`` of its nodes."""
        ...

    def verified(self, chunks: Sequence[ChunkRecord], built: Built) -> dict[str, list[VerifiedItem]]:
        """Verified items per chunk id; a chunk whose calls failed is absent (its document part then fails)."""
        ...

    def mind_maps(self, docs: dict[str, list[ChunkRecord]], items: dict[str, list[VerifiedItem]],
                  built: Built) -> dict[str, MindMapOutline]:
        """Per document part (``docs`` keys: the document id, with ``:p<part>`` past the first): its topic and
        leaf route paths."""
        ...

    def place(self, topic: str, paths: list[tuple[str, ...]], chunks: list[ChunkRecord],
              items: list[VerifiedItem]) -> list[tuple[str, ...]]:
        """The leaf path each of a document part's ``items`` hangs under (``chunks``: the part's, in order)."""
        ...


@dataclass(frozen=True)
class SharedExtraction:
    """One batch's shared call (atoms, triples and maybe tags at once), split into each layer's extractor for
    that batch: ``chunks`` are the chunks whose call succeeded, and each extractor gives their part."""

    chunks: list[ChunkRecord]
    atoms: AtomExtractor
    triples: TripleExtractor
    tags: TagExtractor | None


class KnowledgeExtractor(Protocol):
    """One call per chunk for several layers (:mod:`kg.layers.distilled.combined`)."""

    @property
    def method(self) -> str: ...

    def extract(self, chunks: Sequence[ChunkRecord], built: Built, layers: Sequence[str]) -> SharedExtraction:
        """The batch's shared extraction; a chunk whose call failed is failed in ``built`` for every one of
        ``layers`` and left out."""
        ...


class Extractors(Protocol):
    """A mode (LLM or offline): the extractor of each layer that has one, and the shared call of atoms,
    triples and (``with_tags``) tags when the mode has one (None: each layer extracts alone)."""

    def atoms(self, ctx: Context) -> AtomExtractor: ...

    def triples(self, ctx: Context) -> TripleExtractor: ...

    def tags(self, ctx: Context) -> TagExtractor: ...

    def fact_items(self, ctx: Context) -> FactItemExtractor: ...

    def knowledge(self, ctx: Context, with_tags: bool) -> KnowledgeExtractor | None: ...
