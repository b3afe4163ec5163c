"""PIKE-RAG's hierarchical retriever H-R (Section 6.1): paths (a) and (b) of Figure 11 at once.

The question retrieves up to 8 chunks directly at raw cosine >= 0.5 (path a); each atomic query (the
question itself when none is given) retrieves up to 4 more chunks through atoms (path b). The chunks of
both paths are merged, a chunk keeping its best score and every explanation. On a graph without atoms,
path (b) falls back to chunk vectors (see :func:`kg.retrieval.methods.atom.atom_candidates`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kg.embeddings import Embedder
from kg.retrieval.base import Hit, RetrievalFilter, Retriever
from kg.retrieval.common import query_vector
from kg.retrieval.methods.atom import atom_candidates
from kg.retrieval.methods.chunk import chunk_vector_hits
from kg.store.base import GraphStore

__all__ = ["HierarchicalRetriever"]


class HierarchicalRetriever(Retriever):
    """H-R, with the paper's settings as defaults.

    Example::

        hr = HierarchicalRetriever(store, embedder)
        hits = hr.retrieve_hierarchical("Who ...?", atomic_queries=["When was X born?", "Where is Y?"])
    """

    name = "hr"

    def __init__(self, store: GraphStore, embedder: Embedder, *, chunk_k: int = 8, chunk_threshold: float = 0.5,
                 atom_k: int = 4, atom_threshold: float = 0.5) -> None:
        self.store, self.embedder = store, embedder
        self.chunk_k, self.chunk_threshold = chunk_k, chunk_threshold
        self.atom_k, self.atom_threshold = atom_k, atom_threshold

    def retrieve_hierarchical(self, question: str, atomic_queries: Sequence[str] = (),
                              where: RetrievalFilter | None = None) -> list[Hit]:
        """Every chunk of both paths (up to ``chunk_k + atom_k * len(atomic_queries)``), best first."""
        merged: dict[str, Hit] = {}
        for hit in chunk_vector_hits(self.store, query_vector(self.embedder, question), k=self.chunk_k,
                                     threshold=self.chunk_threshold, where=where):
            merged[hit.chunk_id] = hit
        for query in list(atomic_queries) or [question]:
            for cand in atom_candidates(self.store, self.embedder, query, k=self.atom_k,
                                        threshold=self.atom_threshold, exclude_chunk_ids=[], where=where):
                known = merged.get(cand.hit.chunk_id)
                if known is None:
                    merged[cand.hit.chunk_id] = cand.hit
                else:
                    known.sources.extend(cand.hit.sources)
                    known.score = max(known.score, cand.hit.score)
        return sorted(merged.values(), key=lambda h: -h.score)

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        return self.retrieve_hierarchical(question, where=where)[:k]
