"""One typed settings model per retrieval method, as :func:`kg.retrieval.make_retriever` takes them.

Each model holds the knobs of its method with the method's defaults; an unknown knob or a value of the
wrong type is refused when the model is built (``make_retriever`` raises :class:`~kg.errors.RetrievalError`).

>>> HybridSettings(fusion="linear").rrf_k
60.0
>>> StrataSettings().weights["ppr"]
0.0
>>> SETTINGS["kg2rag"](seeds=1).hops
1
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kg.retrieval.common_terms import CommonTermRule
from kg.retrieval.fusion import Fusion
from kg.retrieval.methods.kg2rag import Reranker
from kg.retrieval.methods.multigrain import MULTIGRAIN_WEIGHTS
from kg.retrieval.methods.strata import LINK_WEIGHTS
from kg.retrieval.methods.tags import Expander

__all__ = [
    "SETTINGS",
    "AtomSettings",
    "ChunkSettings",
    "FulltextSettings",
    "HRSettings",
    "HybridSettings",
    "KG2RAGSettings",
    "MultigrainSettings",
    "PGRAGSettings",
    "PPRSettings",
    "RetrieverSettings",
    "StrataSettings",
    "TagsSettings",
]


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


class ChunkSettings(_Settings):
    """``chunk``: chunks at cosine >= ``threshold`` (-1: every chunk ranks)."""

    threshold: float = -1.0


class AtomSettings(_Settings):
    """``atom``: atoms at cosine >= ``threshold``, hopping to their chunks."""

    threshold: float = 0.0


class FulltextSettings(_Settings):
    """``fulltext``: Lucene over chunks, and over atoms too when ``atoms`` (fused by ``fusion``: calibrated
    z-score, linear, or RRF with ``rrf_k``), the query not led by terms ``common_terms`` calls common
    (:mod:`kg.retrieval.common_terms`; ``None``: no term is)."""

    atoms: bool = True
    fusion: Fusion = "zscore"
    rrf_k: float = 60.0
    common_terms: CommonTermRule | None = CommonTermRule()


class HybridSettings(_Settings):
    """``hybrid``: the vector, atom and Lucene paths fused by ``fusion`` (calibrated z-score, linear or RRF
    with ``rrf_k``) with ``weights`` per path (``None``: the embedder's defaults) over ``candidates`` per path;
    atoms below ``atom_threshold`` do not count; ``common_terms`` as ``fulltext``'s."""

    fusion: Fusion = "zscore"
    weights: Mapping[str, float] | None = None
    rrf_k: float = 60.0
    candidates: int = 50
    atom_threshold: float = 0.0
    common_terms: CommonTermRule | None = CommonTermRule()


class MultigrainSettings(_Settings):
    """``multigrain``: the weights of the chunk, section, document and upward paths (merged over the
    defaults), ``candidates`` chunks and ``coarse`` documents/sections."""

    weights: Mapping[str, float] = Field(default_factory=lambda: dict(MULTIGRAIN_WEIGHTS))
    candidates: int = 50
    coarse: int = 10


class KG2RAGSettings(_Settings):
    """``kg2rag``: ``seeds`` chunks, facts ``hops`` away (at most ``max_facts``), an optional cross-encoder.

    ``hub_facts``: an entity with more facts than this is not expanded (``None``: every entity is). Its facts
    could only be ranked by their chunks' cosine, which the seed search already did, at a cost linear in their
    number (docs/retrieval.md, "kg2rag at scale")."""

    hops: int = 1
    seeds: int = 5
    max_facts: int = 200
    hub_facts: int | None = 2000
    reranker: Reranker | None = None


class PGRAGSettings(_Settings):
    """``pgrag``: ``anchors`` fact items at cosine >= ``threshold``; the walk's ``support`` and ``ambiguity``."""

    anchors: int = 5
    threshold: float = 0.0
    support: float = 0.03
    ambiguity: float = 0.05


class PPRSettings(_Settings):
    """``ppr``: personalised PageRank (HippoRAG 2's defaults: ``damping`` 0.5, ``passage_weight`` 0.05 for
    passage seeds against 1 for entity seeds, ``fact_seeds`` 5 facts of ``fact_candidates``); seeds from
    ``entity_candidates`` name matches and ``passage_candidates`` dense and Lucene chunks; edge weights per kind;
    at most ``iterations`` (or until ``tolerance``). ``engine``: "auto" runs the PageRank in GDS when the server
    has it, else the Cypher fallback, except that a graph of at most ``memory_nodes`` chunks and entities (0 by
    default: opt in for a long-lived process) runs in this process on the graph read once, with exact restart
    weights; "memory", "gds" or "cypher" force one. In GDS, one PageRank with exact restart weights where the
    server has Strata's ``strata.ppr.stream`` (a server Strata provisions has it) and ``weighted``; else at
    most ``levels`` GDS PageRanks per query (seed weight groups) on ``concurrency`` threads. The fallback runs
    in Python on the seeds' neighbourhood, ``hops`` out, ``fanout`` neighbours per node and edge kind.
    ``common_terms``: as ``fulltext``'s, for the Lucene passage seeds."""

    damping: float = Field(0.5, gt=0.0, lt=1.0)
    passage_weight: float = Field(0.05, ge=0.0)
    fact_seeds: int = Field(5, ge=0)
    fact_candidates: int = Field(20, ge=1)
    entity_candidates: int = Field(20, ge=1)
    passage_candidates: int = Field(50, ge=1)
    mention_weight: float = Field(1.0, ge=0.0)
    fact_weight: float = Field(1.0, ge=0.0)
    reference_weight: float = Field(1.0, ge=0.0)
    levels: int = Field(3, ge=1)
    iterations: int = Field(20, ge=1)
    tolerance: float = Field(1e-4, gt=0.0)
    engine: Literal["auto", "memory", "gds", "cypher"] = "auto"
    memory_nodes: int = Field(0, ge=0)
    concurrency: int = Field(1, ge=1)
    hops: int = Field(3, ge=1)
    fanout: int = Field(50, ge=1)
    weighted: bool = True
    common_terms: CommonTermRule | None = CommonTermRule()


class TagsSettings(_Settings):
    """``tags``: the query expander (None: the distilled layer's tag expansion, when installed)."""

    expander: Expander | None = None


class HRSettings(_Settings):
    """``hr``: ``chunk_k`` chunks at ``chunk_threshold`` plus ``atom_k`` through atoms at ``atom_threshold``."""

    chunk_k: int = 8
    chunk_threshold: float = 0.5
    atom_k: int = 4
    atom_threshold: float = 0.5


class StrataSettings(_Settings):
    """``strata``: hybrid (``fusion`` of its paths with ``path_weights`` over ``candidates`` per path, at
    least ``k``) plus links from its first ``seeds`` hits, fused by RRF (``rrf_k``) with ``weights`` per
    signal: ``hybrid``, ``question_title``, ``named_by``, ``bridge``, ``entity`` and ``ppr`` (the ``ppr``
    method's ranking); a signal of weight 0 is not run (by default ``bridge``, ``entity`` and ``ppr``:
    docs/retrieval.md has the numbers). Each seed, and each of the first ``seeds`` other passages the question
    names, is followed by its ``follow`` nearest bridge links. ``rounds`` rounds in all (1: one): each later
    round probes the ``bridges`` bridge names of each of the last round's ``round_seeds`` best hits
    (:mod:`kg.retrieval.rounds`), and each seed's first ``round_follow`` hits about a bridge are placed after
    it, not before the ``round_after``-th result.
    ``path_weights`` ``None``: the embedder's defaults (:func:`~kg.retrieval.methods.hybrid.default_weights`);
    ``common_terms`` as ``fulltext``'s."""

    seeds: int = Field(default=3, ge=0)
    follow: int = Field(default=2, ge=0)
    candidates: int = Field(default=15, ge=1)
    weights: Mapping[str, float] = Field(default_factory=lambda: dict(LINK_WEIGHTS))
    rrf_k: float = 60.0
    fusion: Fusion = "zscore"
    path_weights: Mapping[str, float] | None = None
    common_terms: CommonTermRule | None = CommonTermRule()
    rounds: int = Field(default=2, ge=1, le=4)
    round_seeds: int = Field(default=2, ge=1)
    bridges: int = Field(default=2, ge=1)
    round_follow: int = Field(default=1, ge=0)
    round_after: int = Field(default=2, ge=0)


RetrieverSettings = (ChunkSettings | AtomSettings | FulltextSettings | HybridSettings | MultigrainSettings
                     | KG2RAGSettings | PGRAGSettings | TagsSettings | HRSettings | StrataSettings | PPRSettings)
"""The settings of any one method."""

SETTINGS: Mapping[str, type[RetrieverSettings]] = {
    "chunk": ChunkSettings,
    "atom": AtomSettings,
    "fulltext": FulltextSettings,
    "hybrid": HybridSettings,
    "multigrain": MultigrainSettings,
    "kg2rag": KG2RAGSettings,
    "pgrag": PGRAGSettings,
    "tags": TagsSettings,
    "hr": HRSettings,
    "strata": StrataSettings,
    "ppr": PPRSettings,
}
"""Each method's settings model, by the name ``--method`` selects."""
