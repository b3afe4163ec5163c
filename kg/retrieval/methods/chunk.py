"""(a) Chunk vector top-k: ``cypher/retrieval/chunk_vector.cypher``, PIKE-RAG Figure 11 path (a)."""

from __future__ import annotations

from kg.embeddings import Embedder
from kg.retrieval.base import Hit, RetrievalFilter, Retriever
from kg.retrieval.common import filter_params, hit_from_row, query_vector
from kg.store.base import GraphStore
from kg.store.queries import CHUNK_VECTOR

__all__ = ["ChunkVectorRetriever", "chunk_vector_hits"]


def chunk_vector_hits(store: GraphStore, vector: list[float], *, k: int, threshold: float = -1.0,
                      where: RetrievalFilter | None = None, oversample: int = 4) -> list[Hit]:
    """The ``k`` chunks nearest to ``vector`` with raw cosine >= ``threshold``. The index is asked for
    ``oversample * k`` neighbours so that filters still leave ``k``."""
    rows = store.read(CHUNK_VECTOR, vector=vector, k=k, candidates=max(k * oversample, 20),
                      threshold=threshold, **filter_params(where))
    return [hit_from_row(r) for r in rows]


class ChunkVectorRetriever(Retriever):
    """Dense retrieval over chunk embeddings (the HNSW vector index).

    Example::

        hits = ChunkVectorRetriever(store, embedder).retrieve("Who founded Acme?", k=5)
    """

    name = "chunk"

    def __init__(self, store: GraphStore, embedder: Embedder, *, threshold: float = -1.0) -> None:
        self.store, self.embedder, self.threshold = store, embedder, threshold

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        return chunk_vector_hits(self.store, query_vector(self.embedder, question), k=k,
                                 threshold=self.threshold, where=where)
