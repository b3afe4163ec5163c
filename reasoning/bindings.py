"""Binds the reasoning ports to :mod:`kg.retrieval` and :mod:`kg.distill` (imported lazily).

When those packages are not installed in this build, :func:`default_ports` falls back to the plain-Cypher
ports of :mod:`reasoning.local`, so every method still runs on the same graph.
"""

from __future__ import annotations

import importlib
from typing import Any

from kg.embeddings import Embedder
from kg.graph.store import GraphStore
from kg.llm import LLM
from kg.retrieval.base import AtomCandidate
from reasoning.local import CypherTables, local_ports
from reasoning.ports import Ports
from reasoning.settings import ReasoningSettings

__all__ = ["default_ports", "retrieval_ports"]


class _AtomCandidates:
    """:class:`reasoning.ports.AtomSearch` over ``kg.retrieval.atom_candidates``."""

    def __init__(self, fn: Any, store: GraphStore, embedder: Embedder) -> None:
        self.fn, self.store, self.embedder = fn, store, embedder

    def candidates(self, query: str, *, k: int, threshold: float, exclude_chunk_ids: list[str]
                   ) -> list[AtomCandidate]:
        found: list[AtomCandidate] = self.fn(self.store, self.embedder, query, k=k, threshold=threshold,
                                             exclude_chunk_ids=exclude_chunk_ids)
        return found


def retrieval_ports(store: GraphStore, embedder: Embedder, llm: LLM | None) -> Ports | None:
    """Ports bound to ``kg.retrieval`` (None when this build has no ``kg.retrieval.make_retriever``)."""
    try:
        retrieval = importlib.import_module("kg.retrieval")
        make = retrieval.make_retriever
        atom_candidates = retrieval.atom_candidates
    except (ImportError, AttributeError):
        return None
    return Ports(
        flat=make("chunk", store, embedder, llm=llm),
        hierarchical=make("hr", store, embedder, llm=llm),
        # Factual questions take Strata's best hybrid: vectors, atoms, Lucene and title links, fused.
        hybrid=make("strata", store, embedder, llm=llm),
        kg2rag=make("kg2rag", store, embedder, llm=llm),
        pgrag=make("pgrag", store, embedder, llm=llm),
        atoms=_AtomCandidates(atom_candidates, store, embedder),
        tables=CypherTables(store),
    )


def default_ports(store: GraphStore, embedder: Embedder, llm: LLM | None, settings: ReasoningSettings) -> Ports:
    """``kg.retrieval`` when present, else the reasoning-local Cypher ports."""
    return retrieval_ports(store, embedder, llm) or local_ports(store, embedder, settings)
