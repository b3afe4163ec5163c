"""Title and entity linking: the passages a text names, for bridge (multi-hop) questions.

A bridge question names one thing and needs a passage about another that the first passage names
("the director of the film X" -> the passage on X names the director -> the director's passage). Lexical
and dense retrieval find the first hop; the second is found by following names. Candidate documents
are those keyed (``Document.mention_key``, as the load's title linking finds them) by a word of the text
that can be part of a name (:func:`~kg.store.lucene.lookup_terms` of
:func:`~kg.store.lucene.name_query`; ``cypher/retrieval/title_links.cypher``, and for the seeds of
:mod:`~kg.retrieval.methods.strata` the terms each chunk stores), and are kept only when their
mention name (the title, or for a passage titled by an identifier it never uses the name it opens with:
:func:`~kg.layers.resource.references.mention_name`) occurs verbatim, on word boundaries, in the linking
text (a disambiguating suffix such as ``"(film)"`` is ignored), so a shared common word is not a link.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kg.retrieval.base import Hit, RetrievalFilter
from kg.retrieval.common import filter_params, hit_from_row
from kg.shared.text import title_core
from kg.store.base import GraphStore
from kg.store.lucene import lookup_terms, name_query
from kg.store.queries import TITLE_LINKS

__all__ = ["mentions_title", "named_links", "title_links"]

def mentions_title(text: str, title: str) -> bool:
    """Whether ``text`` names ``title`` verbatim (case-sensitive, word boundaries, at least 3 characters)."""
    core = title_core(title)
    if len(core) < 3:
        return False
    return re.search(rf"(?<!\w){re.escape(core)}(?!\w)", text) is not None


def title_links(store: GraphStore, texts: Sequence[str], vector: list[float], *, candidates: int = 30,
                max_terms: int = 64, exclude_documents: Sequence[Sequence[str]] = (),
                where: RetrievalFilter | None = None) -> list[list[Hit]]:
    """For each text, the best chunk of each document whose title it names, by raw cosine to the query
    ``vector``, best first; ``exclude_documents[i]`` are documents text ``i`` may not link to (its own).
    One round trip for all texts."""
    keys = [lookup_terms(name_query(text, max_terms=max_terms)) for text in texts]
    asked = [i for i, terms in enumerate(keys) if terms]
    if not asked:
        return [[] for _ in texts]
    rows = store.read(TITLE_LINKS, keys=[keys[i] for i in asked], texts=[texts[i] for i in asked],
                      vector=vector, candidates=candidates, **filter_params(where))
    candidates_of: list[list[Hit]] = [[] for _ in texts]
    for row in rows:
        i = asked[row["n"]]
        if row["document_id"] not in (exclude_documents[i] if i < len(exclude_documents) else ()):
            candidates_of[i].append(hit_from_row(row))
    return [named_links(text, hits) for text, hits in zip(texts, candidates_of, strict=True)]


def named_links(text: str, candidates: Sequence[Hit]) -> list[Hit]:
    """The title-link candidates whose document title (the hit's ``via``) ``text`` names, best first."""
    named = [h for h in candidates if mentions_title(text, h.sources[0].via or "")]
    return sorted(named, key=lambda h: -h.score)
