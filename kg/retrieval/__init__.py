"""Retrieval over Strata's graph: every method is Cypher in ``cypher/retrieval/`` returning typed hits.

Methods (:data:`METHODS`, selected by name with :func:`make_retriever`):

==============  ========================================================================================
``chunk``       (a) chunk vector top-k
``atom``        (b) atom vector -> ``[:ATOM_OF]`` -> chunk, best atom per chunk as the explanation
``fulltext``    (c) Lucene BM25 over chunks and atoms, the user's text escaped
``hybrid``      (d) (a) + (b) + (c) fused by RRF or normalised linear fusion, in one query
``multigrain``  (e) PIKE-RAG multi-granularity propagation: documents/sections down, atoms/facts up
``kg2rag``      (f) KG2RAG: seed chunks -> entities -> m-hop facts -> chunks, organised by MST
``pgrag``       (g) PG-RAG pseudo-graph walk from anchor fact items, a mind-map context
``tags``        (h) query expansion through the auto-tagging table, then ``hybrid``
``hr``          PIKE-RAG's hierarchical retriever H-R (paths a and b together)
``strata``      the recommended default: hybrid + title, bridge and entity links
==============  ========================================================================================

Example::

    from kg.retrieval import make_retriever
    retriever = make_retriever("strata", store, embedder)
    for hit in retriever.retrieve("Which magazine was started first?", k=5):
        print(f"{hit.score:.3f} {hit.title}: {hit.explain()}")
"""

from __future__ import annotations

from typing import Any

from kg.embeddings import Embedder
from kg.errors import RetrievalError
from kg.llm import LLM
from kg.retrieval.base import AtomCandidate, Hit, HitSource, RetrievalFilter, Retriever
from kg.retrieval.methods.atom import atom_candidates
from kg.store.base import GraphStore

__all__ = [
    "METHODS", "AtomCandidate", "Hit", "HitSource", "RetrievalFilter", "Retriever", "atom_candidates",
    "make_retriever",
]

METHODS: tuple[str, ...] = (
    "chunk", "atom", "fulltext", "hybrid", "multigrain", "kg2rag", "pgrag", "tags", "hr", "strata",
)


def make_retriever(name: str, store: GraphStore, embedder: Embedder, *, llm: LLM | None = None,
                   **settings: Any) -> Retriever:
    """The retriever called ``name`` (one of :data:`METHODS`); ``settings`` go to its constructor."""
    from kg.retrieval.methods.atom import AtomRetriever
    from kg.retrieval.methods.chunk import ChunkVectorRetriever
    from kg.retrieval.methods.fulltext import FulltextRetriever
    from kg.retrieval.methods.hr import HierarchicalRetriever
    from kg.retrieval.methods.hybrid import HybridRetriever
    from kg.retrieval.methods.kg2rag import KG2RAGRetriever
    from kg.retrieval.methods.multigrain import MultiGranularityRetriever
    from kg.retrieval.methods.pgrag import PGRAGRetriever
    from kg.retrieval.methods.strata import StrataRetriever
    from kg.retrieval.methods.tags import TagExpansionRetriever

    if name == "chunk":
        return ChunkVectorRetriever(store, embedder, **settings)
    if name == "atom":
        return AtomRetriever(store, embedder, **settings)
    if name == "fulltext":
        return FulltextRetriever(store, **settings)
    if name == "hybrid":
        return HybridRetriever(store, embedder, **settings)
    if name == "multigrain":
        return MultiGranularityRetriever(store, embedder, **settings)
    if name == "kg2rag":
        return KG2RAGRetriever(store, embedder, **settings)
    if name == "pgrag":
        return PGRAGRetriever(store, embedder, llm=llm, **settings)
    if name == "tags":
        return TagExpansionRetriever(HybridRetriever(store, embedder), store, **settings)
    if name == "hr":
        return HierarchicalRetriever(store, embedder, **settings)
    if name == "strata":
        return StrataRetriever(store, embedder, **settings)
    raise RetrievalError(f"unknown retrieval method {name!r}; choose one of {', '.join(METHODS)}")
