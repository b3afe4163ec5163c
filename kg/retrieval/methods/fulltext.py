"""(c) Full-text retrieval: Lucene BM25 over chunks (text and title) and over atoms, the user's text escaped, not
led by the store's common terms (:mod:`kg.retrieval.common_terms`).

The two indexes are fused when atoms exist, by calibrated (z-score) fusion with ``hybrid``'s weights of
its two Lucene paths (RRF on request); on a graph without atoms this is plain Lucene BM25 over chunks.
"""

from __future__ import annotations

from collections.abc import Collection

from kg.retrieval.base import Hit, RetrievalFilter, Retriever
from kg.retrieval.common import filter_params, hit_from_row
from kg.retrieval.common_terms import CommonTermRule, shared_common_terms
from kg.retrieval.fusion import Fusion, fuse_hits
from kg.retrieval.methods.hybrid import DEFAULT_WEIGHTS
from kg.store.base import GraphStore
from kg.store.lucene import lucene_query
from kg.store.queries import FULLTEXT_ATOMS, FULLTEXT_CHUNKS

__all__ = ["FulltextRetriever", "fulltext_hits"]

_FULLTEXT = {"chunks": FULLTEXT_CHUNKS, "atoms": FULLTEXT_ATOMS}


def fulltext_hits(store: GraphStore, text: str, *, k: int, layer: str = "chunks",
                  where: RetrievalFilter | None = None, candidates: int | None = None,
                  common: Collection[str] = ()) -> list[Hit]:
    """Lucene hits for ``text`` over ``layer`` ``"chunks"`` or ``"atoms"``, the query not led by the ``common``
    terms (:func:`~kg.store.lucene.lucene_query`); none for a text without terms."""
    query = lucene_query(text, common=common)
    if not query:
        return []
    rows = store.read(_FULLTEXT[layer], query=query, k=k, candidates=candidates or max(4 * k, 20),
                      **filter_params(where))
    return [hit_from_row(r) for r in rows]


class FulltextRetriever(Retriever):
    """Lexical retrieval through Neo4j's Lucene full-text indexes.

    Example::

        FulltextRetriever(store).retrieve('AND OR "( ) : ~ ^ \\ /', k=3)   # hostile text is matched literally
    """

    name = "fulltext"

    def __init__(self, store: GraphStore, *, atoms: bool = True, fusion: Fusion = "zscore",
                 rrf_k: float = 60.0, common_terms: CommonTermRule | None = CommonTermRule()) -> None:
        self.store, self.atoms, self.fusion, self.rrf_k = store, atoms, fusion, rrf_k
        self.common_terms = shared_common_terms(store, common_terms)

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        common = self.common_terms.terms()
        chunks = fulltext_hits(self.store, question, k=k, where=where, common=common)
        atoms = (fulltext_hits(self.store, question, k=k, layer="atoms", where=where, common=common)
                 if self.atoms else [])
        if not atoms:
            return chunks
        weights = {path: DEFAULT_WEIGHTS[path] for path in ("fulltext", "fulltext_atom")}
        return fuse_hits({"fulltext": chunks, "fulltext_atom": atoms}, k=k, method=self.fusion, rrf_k=self.rrf_k,
                         weights=weights, depth=k)
