"""(d) Hybrid retrieval: chunk vectors, atoms and Lucene full text fused in one Cypher round trip.

``cypher/retrieval/hybrid.cypher`` runs the paths as ``CALL {}`` union branches in concurrent inner
transactions (``IN 4 CONCURRENT TRANSACTIONS``: on a server with idle cores the paths run at once) and fuses
them, by default with calibrated (z-score) fusion, else normalised linear fusion or RRF (the formulas of
:mod:`kg.retrieval.fusion`). A path with weight 0 is skipped, which is also how a caller restricts
retrieval to some layers (e.g. ``weights={"atom": 0, ...}``).

:data:`DEFAULT_WEIGHTS` weigh each lexical path about 3 to 4 times a vector path: set on the HotpotQA
sample with the default wordllama embedder (docs/retrieval.md: the sweep, and the held-out checks), where
the vector paths are the weaker signal. A stronger embedder's vectors weigh more: :data:`EMBEDDER_WEIGHTS`
by embedder family, which :func:`default_weights` picks when no ``weights`` are given.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from kg.embeddings import Embedder
from kg.retrieval.base import Hit, RetrievalFilter, Retriever
from kg.retrieval.common import filter_params, hit_from_row, query_vector
from kg.retrieval.common_terms import CommonTermRule, shared_common_terms
from kg.retrieval.fusion import Fusion
from kg.store.base import GraphStore
from kg.store.lucene import lookup_terms, lucene_query, name_query
from kg.store.queries import HYBRID, HybridRow

__all__ = ["DEFAULT_WEIGHTS", "EMBEDDER_WEIGHTS", "HybridRetriever", "LinkedHit", "LinkedRanking", "default_weights",
           "hybrid_hits", "hybrid_hits_with_links"]

DEFAULT_WEIGHTS: Mapping[str, float] = {"chunk": 0.25, "atom": 0.25, "fulltext": 1.0, "fulltext_atom": 0.75}
# By the family an embedder's name starts with ("minilm:all-MiniLM-L6-v2"): the largest vector weight at which
# `strata` keeps its best recall@5 on the HotpotQA sample (docs/retrieval.md, "Path weights per embedder").
EMBEDDER_WEIGHTS: Mapping[str, Mapping[str, float]] = {
    "minilm": {"chunk": 0.5, "atom": 0.5, "fulltext": 1.0, "fulltext_atom": 0.75},
    "e5": {"chunk": 1.0, "atom": 1.0, "fulltext": 1.0, "fulltext_atom": 0.75},
}


def default_weights(embedder: Embedder) -> Mapping[str, float]:
    """The path weights for ``embedder``'s vectors: its family's in :data:`EMBEDDER_WEIGHTS`, else
    :data:`DEFAULT_WEIGHTS`."""
    return EMBEDDER_WEIGHTS.get(embedder.name.partition(":")[0], DEFAULT_WEIGHTS)


def hybrid_hits(store: GraphStore, vector: list[float], text: str, *, k: int, fusion: Fusion = "zscore",
                weights: Mapping[str, float] = DEFAULT_WEIGHTS, rrf_k: float = 60.0, candidates: int = 50,
                threshold: float = -1.0, atom_threshold: float = 0.0,
                where: RetrievalFilter | None = None, common: Collection[str] = ()) -> list[Hit]:
    """Fused hits; each hit's sources list every path that found it with its raw score and rank order. The
    Lucene paths' query is not led by the ``common`` terms (:func:`~kg.store.lucene.lucene_query`)."""
    return [hit_from_row(r) for r in _rows(store, vector, text, k=k, fusion=fusion, weights=weights, rrf_k=rrf_k,
                                           candidates=candidates, threshold=threshold,
                                           atom_threshold=atom_threshold, where=where, common=common)]


@dataclass(frozen=True)
class LinkedHit:
    """A hybrid hit and, for the top seeds, the title-link candidates of its chunk (empty for the others):
    ``None`` when a seed's chunk stores no ``name_terms`` (loaded before they existed), so the caller must
    look its links up itself; and, when asked for, the passages that name it (incoming REFERENCES), nearest
    to the question first."""

    hit: Hit
    link_candidates: list[Hit] | None
    named_by: list[Hit] = field(default_factory=list)


@dataclass(frozen=True)
class LinkedRanking:
    """The hybrid ranking with its seeds' link candidates, and the title-link candidates of the question
    itself (empty unless asked for); :func:`~kg.retrieval.links.named_links` keeps the named ones."""

    hits: list[LinkedHit]
    question_links: list[Hit]


def hybrid_hits_with_links(store: GraphStore, vector: list[float], text: str, *, k: int, seeds: int,
                           question_links: bool = False, named_by: int = 0, link_candidates: int = 30,
                           fusion: Fusion = "zscore",
                           weights: Mapping[str, float] = DEFAULT_WEIGHTS, rrf_k: float = 60.0,
                           candidates: int = 50, where: RetrievalFilter | None = None,
                           common: Collection[str] = ()) -> LinkedRanking:
    """:func:`hybrid_hits` whose first ``seeds`` hits carry their title-link candidates, and, with
    ``question_links``, the question's own title-link candidates, and with ``named_by`` > 0 the seeds' ``named_by``
    nearest naming passages, all from the same round trip. Title-link candidates are unfiltered:
    :func:`~kg.retrieval.links.mentions_title` decides."""
    rows = _rows(store, vector, text, k=k, fusion=fusion, weights=weights, rrf_k=rrf_k, candidates=candidates,
                 where=where, link_seeds=seeds, link_candidates=link_candidates, question_links=question_links,
                 named_by=named_by, common=common)
    hits = [LinkedHit(hit_from_row(r), None if r["links"] is None else [hit_from_row(link) for link in r["links"]],
                      [hit_from_row(link) for link in r["named_by"]])
            for r in rows]
    asked = rows[0]["question_links"] if rows else None
    return LinkedRanking(hits, [hit_from_row(link) for link in asked or []])


def _rows(store: GraphStore, vector: list[float], text: str, *, k: int, fusion: Fusion,
          weights: Mapping[str, float], rrf_k: float, candidates: int, where: RetrievalFilter | None,
          threshold: float = -1.0, atom_threshold: float = 0.0, link_seeds: int = 0,
          link_candidates: int = 30, question_links: bool = False, named_by: int = 0,
          common: Collection[str] = ()) -> list[HybridRow]:
    return store.read(
        HYBRID, vector=vector, query=lucene_query(text, common=common), k=k, candidates=candidates, fusion=fusion,
        weights={**{p: 0.0 for p in DEFAULT_WEIGHTS}, **weights}, rrf_k=float(rrf_k), threshold=threshold,
        atom_threshold=atom_threshold, link_seeds=link_seeds, link_candidates=link_candidates,
        question_links=question_links, named_by=named_by, text=text,
        question_keys=lookup_terms(name_query(text)) if question_links else [],
        **filter_params(where),
    )


class HybridRetriever(Retriever):
    """Vector + atom + full-text fusion.

    Example::

        retriever = HybridRetriever(store, embedder, fusion="linear", weights={"chunk": 2, "fulltext": 1})
        hits = retriever.retrieve("Which magazine started first?", k=10)

    ``weights`` ``None``: :func:`default_weights` for the embedder. ``common_terms``: when a term is common
    enough not to lead the Lucene paths' query (:mod:`kg.retrieval.common_terms`; ``None``: never).
    """

    name = "hybrid"

    def __init__(self, store: GraphStore, embedder: Embedder, *, fusion: Fusion = "zscore",
                 weights: Mapping[str, float] | None = None, rrf_k: float = 60.0, candidates: int = 50,
                 atom_threshold: float = 0.0, common_terms: CommonTermRule | None = CommonTermRule()) -> None:
        self.store, self.embedder = store, embedder
        self.common_terms = shared_common_terms(store, common_terms)
        self.fusion, self.rrf_k = fusion, rrf_k
        self.weights = dict(default_weights(embedder) if weights is None else weights)
        self.candidates, self.atom_threshold = candidates, atom_threshold

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        return hybrid_hits(self.store, query_vector(self.embedder, question), question, k=k, fusion=self.fusion,
                           weights=self.weights, rrf_k=self.rrf_k, candidates=max(self.candidates, k),
                           atom_threshold=self.atom_threshold, where=where, common=self.common_terms.terms())
