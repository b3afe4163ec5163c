"""(e) Multi-granularity retrieval, PIKE-RAG 5.2.3 and Figure 8, in one query (``multigrain.cypher``).

Similarities g(q, node) are taken at every layer: documents and sections (their embedding is the centroid
of their chunks, or an LLM summary's vector when one was embedded), chunks, and distilled atoms and facts.
They are propagated to chunks and aggregated by

    f = w_chunk * g(c) + w_section * g(section) + w_document * g(document) + w_up * max(0, g(up) - g(c))

where g(up) is the best atom or fact of the chunk: coarse layers propagate down as context (a chunk in a
relevant document rises), fine layers propagate up only where they match better than the chunk as a whole
(a precise atom lifts a long chunk). A missing granularity falls back to g(c), so it neither helps nor hurts.
"""

from __future__ import annotations

from collections.abc import Mapping

from kg.embeddings import Embedder
from kg.retrieval.base import Hit, RetrievalFilter, Retriever
from kg.retrieval.common import filter_params, hit_from_row, query_vector
from kg.store.base import GraphStore
from kg.store.queries import MULTIGRAIN

__all__ = ["MULTIGRAIN_WEIGHTS", "MultiGranularityRetriever"]

MULTIGRAIN_WEIGHTS: Mapping[str, float] = {"chunk": 1.0, "section": 0.25, "document": 0.25, "up": 1.0}


class MultiGranularityRetriever(Retriever):
    """Chunk scores aggregated across the graph's layers.

    Example::

        MultiGranularityRetriever(store, embedder, weights={"chunk": 1, "section": 0.5, "document": 0.5, "up": 1})
    """

    name = "multigrain"

    def __init__(self, store: GraphStore, embedder: Embedder, *, weights: Mapping[str, float] = MULTIGRAIN_WEIGHTS,
                 candidates: int = 50, coarse: int = 10) -> None:
        self.store, self.embedder = store, embedder
        self.weights, self.candidates, self.coarse = {**MULTIGRAIN_WEIGHTS, **weights}, candidates, coarse

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        rows = self.store.read(MULTIGRAIN, vector=query_vector(self.embedder, question), k=k,
                               candidates=max(self.candidates, k), coarse=self.coarse, weights=self.weights,
                               **filter_params(where))
        return [hit_from_row(r) for r in rows]
