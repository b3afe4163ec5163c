"""(c) Full-text retrieval: Lucene BM25 over chunks (text and title) and over atoms, the user's text escaped, not
led by the store's common terms (:mod:`kg.retrieval.common_terms`).

The two indexes are fused when atoms exist, by calibrated (z-score) fusion with ``hybrid``'s weights of
its two Lucene paths (RRF on request); on a graph without atoms this is plain Lucene BM25 over chunks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

from kg.retrieval.base import Hit, RetrievalFilter, Retriever
from kg.retrieval.common import filter_params, hit_from_row
from kg.retrieval.common_terms import CommonTermRule, shared_common_terms
from kg.retrieval.fusion import Fusion, fuse_hits
from kg.retrieval.methods.hybrid import DEFAULT_WEIGHTS
from kg.store.base import GraphStore
from kg.store.lucene import lucene_query
from kg.store.queries import FULLTEXT

__all__ = ["FulltextRetriever", "Layer", "fulltext_hits", "fulltext_paths"]

Layer = Literal["chunks", "atoms"]
# The query's path names: Lucene over chunks and over atoms, as hybrid names the same two paths.
_PATH: dict[Layer, str] = {"chunks": "fulltext", "atoms": "fulltext_atom"}
_LAYER = {path: layer for layer, path in _PATH.items()}


def fulltext_paths(store: GraphStore, text: str, *, k: int, layers: Sequence[Layer] = ("chunks", "atoms"),
                   where: RetrievalFilter | None = None, candidates: int | None = None,
                   common: Collection[str] = ()) -> dict[str, list[Hit]]:
    """Lucene hits for ``text`` over each of ``layers`` (``"chunks"``, ``"atoms"``), its top ``k``, by layer, from
    one query whose paths run at once (``retrieval/fulltext.cypher``); the query is not led by the ``common`` terms
    (:func:`~kg.store.lucene.lucene_query`). A text without terms finds nothing."""
    found: dict[str, list[Hit]] = {layer: [] for layer in layers}
    query = lucene_query(text, common=common)
    if not query or not layers:
        return found
    rows = store.read(FULLTEXT, query=query, paths=[_PATH[layer] for layer in layers], k=k,
                      candidates=candidates or max(4 * k, 20), **filter_params(where))
    for row in rows:
        found[_LAYER[row["path"]]].append(hit_from_row(row))
    return found


def fulltext_hits(store: GraphStore, text: str, *, k: int, layer: Layer = "chunks",
                  where: RetrievalFilter | None = None, candidates: int | None = None,
                  common: Collection[str] = ()) -> list[Hit]:
    """:func:`fulltext_paths` over one layer."""
    return fulltext_paths(store, text, k=k, layers=(layer,), where=where, candidates=candidates,
                          common=common)[layer]


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
        found = fulltext_paths(self.store, question, k=k, where=where, common=self.common_terms.terms(),
                               layers=("chunks", "atoms") if self.atoms else ("chunks",))
        chunks, atoms = found["chunks"], found.get("atoms", [])
        if not atoms:
            return chunks
        weights = {path: DEFAULT_WEIGHTS[path] for path in ("fulltext", "fulltext_atom")}
        return fuse_hits({"fulltext": chunks, "fulltext_atom": atoms}, k=k, method=self.fusion, rrf_k=self.rrf_k,
                         weights=weights, depth=k)
