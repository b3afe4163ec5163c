"""(h) Query expansion through the auto-tagging table, then any retriever.

``kg.layers.distilled.expand_query_with_tags(store, question)`` maps the colloquial terms of a question to the
corpus's tags (``Tag.aliases``); the expansion terms are appended to the question before retrieval, so
both the lexical and the dense paths see the domain's vocabulary. Without ``kg.layers.distilled`` (or when it finds
no tag) the question is used as it is.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from kg.retrieval.base import Hit, HitSource, RetrievalFilter, Retriever
from kg.store.base import GraphStore

__all__ = ["TagExpansionRetriever", "tag_expander"]

Expander = Callable[[GraphStore, str], list[str]]


def tag_expander() -> Expander | None:
    """``kg.layers.distilled.expand_query_with_tags`` when the distilled layer's module is installed."""
    try:
        module: Any = importlib.import_module("kg.layers.distilled")
    except ModuleNotFoundError as exc:
        if exc.name not in ("kg.layers.distilled", "kg"):
            raise
        return None
    expander: Expander | None = getattr(module, "expand_query_with_tags", None)
    return expander


class TagExpansionRetriever(Retriever):
    """Expand the question with tag terms, then delegate to ``base``.

    Example::

        TagExpansionRetriever(HybridRetriever(store, embedder), store).retrieve("my knee hurts when I run")
    """

    name = "tags"

    def __init__(self, base: Retriever, store: GraphStore, *, expander: Expander | None = None) -> None:
        self.base, self.store = base, store
        self.expander = expander if expander is not None else tag_expander()

    def expand(self, question: str) -> list[str]:
        if self.expander is None:
            return []
        return [t for t in self.expander(self.store, question) if t.lower() not in question.lower()]

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        terms = self.expand(question)
        hits = self.base.retrieve(" ".join([question, *terms]), k=k, where=where)
        if terms:
            note = HitSource(path="tags", score=float(len(terms)), via=", ".join(terms))
            for hit in hits:
                hit.sources.append(note)
        return hits
