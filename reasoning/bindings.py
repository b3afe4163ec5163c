"""Binds the reasoning ports to :mod:`kg.retrieval` (retrievers by registry name, Algorithm 1's
``atom_candidates``) and the tables port to Cypher over Row nodes (:class:`reasoning.tables.GraphTables`)."""

from __future__ import annotations

from kg.embeddings import Embedder
from kg.llm import LLM
from kg.retrieval import atom_candidates, make_retriever
from kg.retrieval.base import AtomCandidate
from kg.retrieval.settings import ChunkSettings, HRSettings
from kg.store.base import GraphStore
from reasoning.ports import Ports
from reasoning.settings import ReasoningSettings
from reasoning.tables import GraphTables

__all__ = ["RegistryAtoms", "default_ports"]


class RegistryAtoms:
    """:class:`reasoning.ports.AtomSearch` over :func:`kg.retrieval.atom_candidates` (chunk hits stand in
    for atoms on a graph that has none)."""

    def __init__(self, store: GraphStore, embedder: Embedder) -> None:
        self.store, self.embedder = store, embedder

    def candidates(self, query: str, *, k: int, threshold: float, exclude_chunk_ids: list[str]
                   ) -> list[AtomCandidate]:
        return atom_candidates(self.store, self.embedder, query, k=k, threshold=threshold,
                               exclude_chunk_ids=exclude_chunk_ids)


def default_ports(store: GraphStore, embedder: Embedder, llm: LLM | None, settings: ReasoningSettings) -> Ports:
    """Every port bound to :mod:`kg.retrieval`, with the paper's R and H-R thresholds from ``settings``."""
    return Ports(
        flat=make_retriever("chunk", store, embedder, llm=llm,
                            settings=ChunkSettings(threshold=settings.flat_threshold)),
        hierarchical=make_retriever("hr", store, embedder, llm=llm, settings=HRSettings(
            chunk_k=settings.hier_k, chunk_threshold=settings.hier_threshold, atom_k=settings.atom_k,
            atom_threshold=settings.atom_threshold)),
        # Factual questions take Strata's best hybrid: vectors, atoms, Lucene and title links, fused.
        hybrid=make_retriever("strata", store, embedder, llm=llm),
        kg2rag=make_retriever("kg2rag", store, embedder, llm=llm),
        pgrag=make_retriever("pgrag", store, embedder, llm=llm),
        atoms=RegistryAtoms(store, embedder),
        tables=GraphTables(store),
    )
