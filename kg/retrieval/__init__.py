"""Retrieval over Strata's graph: every method is Cypher in ``cypher/retrieval/`` returning typed hits.

Methods (:data:`METHODS`, selected by name with :func:`make_retriever`):

==============  ========================================================================================
``chunk``       (a) chunk vector top-k
``atom``        (b) atom vector -> ``[:ATOM_OF]`` -> chunk, best atom per chunk as the explanation
``fulltext``    (c) Lucene BM25 over chunks and atoms, the user's text escaped
``hybrid``      (d) (a) + (b) + (c) fused by calibrated (z-score), linear or RRF fusion, in one query
``multigrain``  (e) PIKE-RAG multi-granularity propagation: documents/sections down, atoms/facts up
``kg2rag``      (f) KG2RAG: seed chunks -> entities -> m-hop facts -> chunks, organised by MST
``pgrag``       (g) PG-RAG pseudo-graph walk from anchor fact items, a mind-map context
``tags``        (h) query expansion through the auto-tagging table, then ``hybrid``
``hr``          PIKE-RAG's hierarchical retriever H-R (paths a and b together)
``strata``      the recommended default: hybrid + title and bridge links (entity links, ppr: optional)
``ppr``         HippoRAG 2: personalised PageRank from question seeds over chunks and entities (GDS)
==============  ========================================================================================

Example::

    from kg.retrieval import make_retriever
    retriever = make_retriever("strata", store, embedder)
    for hit in retriever.retrieve("Which magazine was started first?", k=5):
        print(f"{hit.score:.3f} {hit.title}: {hit.explain()}")
"""

from __future__ import annotations

from pydantic import ValidationError

from kg.embeddings import Embedder
from kg.errors import RetrievalError
from kg.llm import LLM
from kg.retrieval.base import AtomCandidate, Hit, HitSource, RetrievalFilter, Retriever
from kg.retrieval.methods.atom import atom_candidates
from kg.retrieval.settings import (
    SETTINGS,
    AtomSettings,
    ChunkSettings,
    FulltextSettings,
    HRSettings,
    HybridSettings,
    KG2RAGSettings,
    MultigrainSettings,
    PGRAGSettings,
    PPRSettings,
    RetrieverSettings,
    TagsSettings,
)
from kg.store.base import GraphStore

__all__ = [
    "METHODS",
    "AtomCandidate",
    "Hit",
    "HitSource",
    "RetrievalFilter",
    "Retriever",
    "RetrieverSettings",
    "atom_candidates",
    "make_retriever",
    "method_settings",
]

METHODS: tuple[str, ...] = (
    "chunk", "atom", "fulltext", "hybrid", "multigrain", "kg2rag", "pgrag", "tags", "hr", "strata", "ppr",
)


def make_retriever(name: str, store: GraphStore, embedder: Embedder, *, llm: LLM | None = None,
                   settings: RetrieverSettings | None = None, **overrides: object) -> Retriever:
    """The retriever called ``name`` (one of :data:`METHODS`) with ``settings``, its method's model
    (:data:`kg.retrieval.settings.SETTINGS`; default: the method's defaults).

    ``overrides`` are fields of that model, validated by it: ``make_retriever("kg2rag", store, embedder,
    seeds=1)`` is ``settings=KG2RAGSettings(seeds=1)``. Settings of another method, an unknown field or a
    value of the wrong type raise :class:`~kg.errors.RetrievalError`.
    """
    from kg.retrieval.methods.atom import AtomRetriever
    from kg.retrieval.methods.chunk import ChunkVectorRetriever
    from kg.retrieval.methods.fulltext import FulltextRetriever
    from kg.retrieval.methods.hr import HierarchicalRetriever
    from kg.retrieval.methods.hybrid import HybridRetriever
    from kg.retrieval.methods.kg2rag import KG2RAGRetriever
    from kg.retrieval.methods.multigrain import MultiGranularityRetriever
    from kg.retrieval.methods.pgrag import PGRAGRetriever
    from kg.retrieval.methods.ppr import PPRRetriever
    from kg.retrieval.methods.strata import StrataRetriever
    from kg.retrieval.methods.tags import TagExpansionRetriever

    s = method_settings(name, settings, **overrides)
    if isinstance(s, ChunkSettings):
        return ChunkVectorRetriever(store, embedder, threshold=s.threshold)
    if isinstance(s, AtomSettings):
        return AtomRetriever(store, embedder, threshold=s.threshold)
    if isinstance(s, FulltextSettings):
        return FulltextRetriever(store, atoms=s.atoms, fusion=s.fusion, rrf_k=s.rrf_k, common_terms=s.common_terms)
    if isinstance(s, HybridSettings):
        return HybridRetriever(store, embedder, fusion=s.fusion, weights=s.weights, rrf_k=s.rrf_k,
                               candidates=s.candidates, atom_threshold=s.atom_threshold,
                               common_terms=s.common_terms)
    if isinstance(s, MultigrainSettings):
        return MultiGranularityRetriever(store, embedder, weights=s.weights, candidates=s.candidates,
                                         coarse=s.coarse)
    if isinstance(s, KG2RAGSettings):
        return KG2RAGRetriever(store, embedder, hops=s.hops, seeds=s.seeds, max_facts=s.max_facts,
                               hub_facts=s.hub_facts, reranker=s.reranker)
    if isinstance(s, PGRAGSettings):
        return PGRAGRetriever(store, embedder, llm=llm, anchors=s.anchors, threshold=s.threshold,
                              support=s.support, ambiguity=s.ambiguity)
    if isinstance(s, TagsSettings):
        return TagExpansionRetriever(HybridRetriever(store, embedder), store, expander=s.expander)
    if isinstance(s, PPRSettings):
        return PPRRetriever(store, embedder, **dict(s))  # dict(): the fields as they are, not dumped
    if isinstance(s, HRSettings):
        return HierarchicalRetriever(store, embedder, chunk_k=s.chunk_k, chunk_threshold=s.chunk_threshold,
                                     atom_k=s.atom_k, atom_threshold=s.atom_threshold)
    return StrataRetriever(store, embedder, **dict(s))  # dict(): the fields as they are, not dumped


def method_settings(name: str, settings: RetrieverSettings | None = None, **overrides: object) -> RetrieverSettings:
    """The settings model of method ``name``: ``settings`` (which must be that method's) with ``overrides``."""
    model = SETTINGS.get(name)
    if model is None:
        raise RetrievalError(f"unknown retrieval method {name!r}; choose one of {', '.join(METHODS)}")
    if settings is not None and not isinstance(settings, model):
        raise RetrievalError(f"retrieval method {name!r} takes {model.__name__}, not {type(settings).__name__}")
    if settings is not None and not overrides:
        return settings
    try:
        return model.model_validate({**(dict(settings) if settings is not None else {}), **overrides})
    except ValidationError as exc:
        raise RetrievalError(f"settings of retrieval method {name!r}: {exc}") from exc
