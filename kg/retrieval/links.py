"""Title and entity linking: the passages a text names, for bridge (multi-hop) questions.

A bridge question names one thing and needs a passage about another that the first passage names
("the director of the film X" -> the passage on X names the director -> the director's passage). Lexical
and dense retrieval find the first hop; the second is found by following names. Candidate documents
come from the Lucene title index (``cypher/retrieval/title_links.cypher``) and are kept only when their
title occurs verbatim, on word boundaries, in the linking text (a disambiguating suffix such as
``"(film)"`` is ignored), so a shared common word is not a link.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kg.graph.store import GraphStore
from kg.retrieval.base import Hit, RetrievalFilter
from kg.retrieval.common import filter_params, hit_from_row
from kg.retrieval.lucene import lucene_query

__all__ = ["mentions_title", "title_core", "title_links"]

_SUFFIX = re.compile(r"\s*\([^)]*\)\s*$")


def title_core(title: str) -> str:
    """``"Tom Smith (footballer)"`` -> ``"Tom Smith"``."""
    return _SUFFIX.sub("", title).strip()


def mentions_title(text: str, title: str) -> bool:
    """Whether ``text`` names ``title`` verbatim (case-sensitive, word boundaries, at least 3 characters)."""
    core = title_core(title)
    if len(core) < 3:
        return False
    return re.search(rf"(?<!\w){re.escape(core)}(?!\w)", text) is not None


def title_links(store: GraphStore, text: str, vector: list[float], *, candidates: int = 30,
                max_terms: int = 64, exclude_documents: Sequence[str] = (),
                where: RetrievalFilter | None = None) -> list[Hit]:
    """The best chunk of each document whose title ``text`` names, by raw cosine to the query ``vector``."""
    query = lucene_query(text, max_terms=max_terms)
    if not query:
        return []
    rows = store.read("retrieval/title_links", query=query, vector=vector, candidates=candidates,
                      **filter_params(where))
    skip = set(exclude_documents)
    hits = [hit_from_row(r) for r in rows if r["document_id"] not in skip and mentions_title(text, r["via"] or "")]
    return sorted(hits, key=lambda h: -h.score)
