"""The offline mode of each distillation layer: no LLM call, everything from the chunk's own text.

Atoms are the chunk's atomic statements (sentences, long ones cut at clause boundaries); triples come from
spaCy (:class:`~kg.layers.distilled.offline.OfflineExtractor`: a trained model when installed, else rules);
tags are each chunk's top TF-IDF terms among those shared by several chunks of the run, class ``keyphrase``,
without colloquial aliases (that mapping needs a model's knowledge of how people speak); fact items are the
chunk's statements (verbatim, so trivially verified), the topic is the document title and the routes are the
chunks' section paths. Everything is marked ``source='offline'``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from kg.layers.distilled.base import Built, Context
from kg.layers.distilled.extractors.protocols import KnowledgeExtractor, MindMapOutline, VerifiedItem
from kg.layers.distilled.models import ChunkExtraction, ChunkRecord, DistillConfig
from kg.layers.distilled.offline import OfflineExtractor
from kg.layers.distilled.text import keyphrases, statements, text_key
from kg.store.base import GraphStore
from kg.store.queries import SECTION_PATHS

__all__ = [
    "OfflineAtomExtractor",
    "OfflineExtractors",
    "OfflineFactItemExtractor",
    "OfflineTagExtractor",
    "OfflineTripleExtractor",
]


class OfflineAtomExtractor:
    """Each chunk's atomic statements."""

    method = "offline"
    kind = "statement"
    source = "offline"

    def __init__(self, config: DistillConfig) -> None:
        self.config = config

    def atoms(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, list[str]]]:
        return [(c, statements(c.text, max_words=self.config.statement_max_words)) for c in chunks]


class OfflineTripleExtractor:
    """Entities from spaCy, related when they share a sentence; the model loads on first use."""

    source = "offline"

    def __init__(self, config: DistillConfig) -> None:
        self.config = config

    @cached_property
    def extractor(self) -> OfflineExtractor:
        return OfflineExtractor(model=self.config.spacy_model)

    @property
    def method(self) -> str:
        return f"offline ({self.extractor.method})"

    def triples(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, ChunkExtraction]]:
        return list(zip(chunks, self.extractor.extract_many([c.text for c in chunks]), strict=True))


class OfflineTagExtractor:
    """Each chunk's top TF-IDF terms of the run (class ``keyphrase``); no aliases."""

    method = "offline (tf-idf keyphrases)"
    source = "offline"

    def __init__(self, config: DistillConfig) -> None:
        self.config = config
        self.terms: dict[str, list[str]] = {}

    def prepare(self, chunks: Sequence[ChunkRecord]) -> None:
        terms = keyphrases([c.text for c in chunks], top=self.config.tags_per_chunk)
        self.terms = {c.id: t for c, t in zip(chunks, terms, strict=True)}

    def tags(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, list[tuple[str, str]]]]:
        return [(c, [("keyphrase", t) for t in self.terms.get(c.id, [])]) for c in chunks]

    def aliases(self, names: list[str], built: Built) -> dict[str, list[str]]:
        return {}


class OfflineFactItemExtractor:
    """Items are the chunk's statements, the topic its document's title, the routes its section path."""

    method = "offline"

    def __init__(self, store: GraphStore, config: DistillConfig) -> None:
        self.store = store
        self.config = config

    def verified(self, chunks: Sequence[ChunkRecord], built: Built) -> dict[str, list[VerifiedItem]]:
        words = self.config.statement_max_words
        return {c.id: [VerifiedItem(c, s, 1.0, 1.0) for s in statements(c.text, max_words=words)] for c in chunks}

    def mind_maps(self, docs: dict[str, list[ChunkRecord]], items: dict[str, list[VerifiedItem]],
                  built: Built) -> dict[str, MindMapOutline]:
        out: dict[str, MindMapOutline] = {}
        ids = [c.id for cs in docs.values() for c in cs]
        sections = {r["id"]: tuple(r["section_path"]) for r in self.store.read(SECTION_PATHS, ids=ids)}
        for doc, chunks in docs.items():
            title = chunks[0].title or doc
            paths = [tuple(p for p in sections.get(c.id, ()) if text_key(p) != text_key(title)) or ("overview",)
                     for c in chunks]
            out[doc] = (title, paths)
        return out

    def place(self, topic: str, paths: list[tuple[str, ...]], chunks: list[ChunkRecord],
              items: list[VerifiedItem]) -> list[tuple[str, ...]]:
        return [paths[chunks.index(it.chunk)] for it in items]


class OfflineExtractors:
    """The offline mode: each layer's extractor works from the text alone."""

    def atoms(self, ctx: Context) -> OfflineAtomExtractor:
        return OfflineAtomExtractor(ctx.config)

    def triples(self, ctx: Context) -> OfflineTripleExtractor:
        return OfflineTripleExtractor(ctx.config)

    def tags(self, ctx: Context) -> OfflineTagExtractor:
        return OfflineTagExtractor(ctx.config)

    def fact_items(self, ctx: Context) -> OfflineFactItemExtractor:
        return OfflineFactItemExtractor(ctx.store, ctx.config)

    def knowledge(self, ctx: Context, with_tags: bool) -> KnowledgeExtractor | None:
        """Offline, each layer extracts alone: there is no call to share."""
        return None
