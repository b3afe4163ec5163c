"""(b) Atom-to-chunk retrieval, PIKE-RAG Figure 11 path (b), and Algorithm 1's atom-to-chunk hop.

Atoms (atomic questions from an LLM, or sentence statements offline) are indexed by their own vectors; a
query finds atoms above a similarity threshold and follows ``[:ATOM_OF]`` to the chunk. The best atom per
chunk is kept as the hit's explanation.
"""

from __future__ import annotations

from kg.embeddings import Embedder
from kg.retrieval.base import AtomCandidate, Hit, RetrievalFilter, Retriever
from kg.retrieval.common import filter_params, graph_has, hit_from_row, query_vector
from kg.retrieval.methods.chunk import chunk_vector_hits
from kg.store.base import GraphStore
from kg.store.queries import ATOM_CANDIDATES, ATOM_VECTOR

__all__ = ["AtomRetriever", "atom_candidates", "atom_hits"]


def atom_hits(store: GraphStore, vector: list[float], *, k: int, threshold: float = 0.0,
              where: RetrievalFilter | None = None, candidates: int | None = None) -> list[Hit]:
    """Chunks reached through their best atom at raw cosine >= ``threshold``, best first."""
    rows = store.read(ATOM_VECTOR, vector=vector, k=k, candidates=candidates or max(8 * k, 40),
                      threshold=threshold, **filter_params(where))
    return [hit_from_row(r) for r in rows]


def atom_candidates(store: GraphStore, embedder: Embedder, query: str, *, k: int, threshold: float,
                    exclude_chunk_ids: list[str], where: RetrievalFilter | None = None) -> list[AtomCandidate]:
    """The top ``k`` atoms for ``query`` (raw cosine >= ``threshold``) with their chunks, skipping chunks
    already in the context and chunks outside ``where``: one Cypher query. On a graph without atoms (not
    distilled) the chunks themselves stand in: each candidate is a chunk vector hit whose ``atom_text`` is
    the chunk's text and whose ``atom_id`` is the chunk's id, so PIKE-RAG's loop still runs, as plain
    chunk retrieval."""
    vector = query_vector(embedder, query)
    where = where or RetrievalFilter()
    if not graph_has(store, "Atom"):
        within = where.model_copy(update={"exclude_chunk_ids": [*where.exclude_chunk_ids, *exclude_chunk_ids]})
        hits = chunk_vector_hits(store, vector, k=k, threshold=threshold, where=within)
        return [AtomCandidate(atom_id=h.chunk_id, atom_text=h.text, score=h.score, hit=h) for h in hits]
    rows = store.read(ATOM_CANDIDATES, vector=vector, k=k, candidates=max(4 * k, 40),
                      threshold=threshold, **filter_params(where, exclude_chunk_ids))
    return [AtomCandidate(atom_id=r["atom_id"], atom_text=r["atom_text"], score=float(r["score"]),
                          hit=hit_from_row(r)) for r in rows]


class AtomRetriever(Retriever):
    """Chunks through their atoms.

    Example::

        for hit in AtomRetriever(store, embedder, threshold=0.3).retrieve("When was X founded?"):
            print(hit.title, hit.sources[0].via)   # the atom that matched
    """

    name = "atom"

    def __init__(self, store: GraphStore, embedder: Embedder, *, threshold: float = 0.0) -> None:
        self.store, self.embedder, self.threshold = store, embedder, threshold

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        return atom_hits(self.store, query_vector(self.embedder, question), k=k, threshold=self.threshold,
                         where=where)
