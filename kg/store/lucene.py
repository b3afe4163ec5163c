"""Turning a user's text into a safe Lucene query for Neo4j's full-text indexes.

A question typed by a person is not Lucene syntax: ``"(1990)"``, ``C++``, ``AT&T`` or a trailing ``?``
would be parsed as operators or fail. :func:`escape_lucene` backslash-escapes every special character and
lower-cases the boolean words (the classic query parser only treats upper-case ``AND``/``OR``/``NOT`` as
operators), so the text is matched literally. :func:`lucene_query` builds what retrieval sends: the
distinct content words of the text, each escaped, joined as an OR of terms (BM25 then weighs them). An
English clitic is not a word of its own: "Beatrice's" is queried as ``beatrice``, not ``beatrice s``, whose
``s`` matched every passage naming someone "S." (the index's analyzer keeps "beatrice's" as one token).
:func:`name_query` keeps only the words that can be part of a name (see its docstring): what title links
look up, and what each chunk stores as ``name_terms`` at load time.

Common terms. A word in a large share of the passages weighs little in BM25 but costs its whole posting list:
an OR of such words makes Lucene score most of the store to find the top few (at a million generated passages,
seven tenths of a ``strata`` query: docs/scaling.md). Given the ``common`` terms of the index
(:class:`kg.retrieval.common_terms.CommonTerms` estimates them), :func:`lucene_query` requires one of the other,
rarer terms and keeps the common ones as optional clauses, ``+(rare ...) common ...``: Lucene's
required-plus-optional scorer then walks only the rare terms' postings and scores the common ones where those
match. A passage keeps the score it had; a passage that holds none of the rare terms is no longer matched (as
Lucene's ``CommonTermsQuery`` and Elasticsearch's ``cutoff_frequency`` did). A query of common terms only is
sent as the plain OR.

Lucene's limits, and the rule that keeps every query within them: a query of more than 1,024 clauses fails
(``TooManyClauses``), and the index's analyzer cuts a word of more than 255 characters into several
tokens, while each CJK character is a token of its own. So a query built here holds at most ``max_terms``
distinct terms and at most :data:`MAX_CLAUSES` analyzed tokens (counted per field the index has: a
two-field index doubles them, which still leaves half of Lucene's limit free); a word longer than
:data:`MAX_TERM_CHARS` characters is left out of the query (no name or search word is that long: it is a
hash, a base64 blob or a run of one letter), except that a run of CJK characters is cut to fit. The text
itself is still indexed whole; only the query leaves such words out.

>>> escape_lucene('AND (a:b) "c"')
'and \\\\(a\\\\:b\\\\) \\\\"c\\\\"'
>>> lucene_query("Who wrote C++ (1985)?")
'wrote c 1985'
>>> lucene_query("When is the director of film Beatrice's birthday?")
'director film beatrice birthday'
>>> lucene_query("When is the director of film Beatrice's birthday?", common={"film", "director"})
'+(beatrice birthday) director film'
>>> name_query("The Hudson river flows past Newburgh (1709) and 北京")
'hudson newburgh 1709 北京'
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from kg.shared.text import CJK_CHARACTER, CJK_CHARACTERS, has_cjk

__all__ = ["MAX_CLAUSES", "MAX_TERM_CHARS", "STOPWORDS", "escape_lucene", "lookup_terms", "lucene_query", "name_query",
           "text_terms", "whole_terms_queries"]

MAX_TERM_CHARS = 64
MAX_CLAUSES = 256

_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
_OPERATOR = re.compile(r"\b(AND|OR|NOT|TO)\b")
_WORD = re.compile(r"\w+", re.UNICODE)
# The possessive and the contractions after an apostrophe ("Beatrice's", "isn't", "we'll"): split off by \w+,
# they would be query terms that match initials and nothing a question means.
_CLITIC = re.compile(r"(?<=\w)['\u2019](?:s|t|d|ll|re|ve|m)\b", re.IGNORECASE)

# Question and function words: frequent in questions, no evidence in a passage.
STOPWORDS = frozenset(
    """a an the and or not of in on at to for from by with as is are was were be been being has have had do does
    did what which who whom whose when where why how that this these those it its into than then there their they
    he she his her him them we you i me my our your also but if so such both either neither nor same other""".split()  # noqa: SIM905 - a word list reads better as text
)


def escape_lucene(text: str) -> str:
    """``text`` with Lucene's special characters escaped and boolean operators disarmed."""
    escaped = _SPECIAL.sub(r"\\\1", text)
    return _OPERATOR.sub(lambda m: m.group(1).lower(), escaped)


def whole_terms_queries(terms: Sequence[str]) -> list[str]:
    """Queries of a keyword-analysed index (each value one whole term) matching any of ``terms``: ORs of
    quoted terms, at most :data:`MAX_CLAUSES` per query."""
    quoted = ['"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in terms]
    return [" OR ".join(quoted[i:i + MAX_CLAUSES]) for i in range(0, len(quoted), MAX_CLAUSES)]


def lucene_query(text: str, *, max_terms: int = 64, common: Collection[str] = ()) -> str:
    """An OR query of the distinct non-stopword terms of ``text`` (at most ``max_terms``), in which one of the
    terms not in ``common`` is required when the text has both kinds (the module docstring); ``""`` when the
    text has no terms, which callers must not send to the index (Lucene rejects an empty query)."""
    terms = _query(_WORD.findall(_CLITIC.sub("", text)), max_terms)
    if not common:
        return terms
    words = terms.split()
    rare = [t for t in words if t not in common]
    if not rare or len(rare) == len(words):
        return terms
    return f"+({' '.join(rare)}) " + " ".join(t for t in words if t in common)


def text_terms(text: str) -> set[str]:
    """The distinct terms :func:`lucene_query` could make of ``text``, stopwords included: what a passage is
    counted as holding when the common terms of an index are estimated."""
    return {bounded for word in _WORD.findall(_CLITIC.sub("", text)) if (bounded := _bounded(word.lower()))}


def name_query(text: str, *, max_terms: int = 64) -> str:
    """Like :func:`lucene_query`, with only the words that are not all lower-case: capitalised words,
    numbers, and scripts without case such as Chinese. Title links match titles verbatim and
    case-sensitively, so a lower-case word of the text can only add candidates that fail that check, and
    a frequent one (``river``) makes the index score thousands of titles for nothing."""
    return _query([word for word in _WORD.findall(text) if not word.islower()], max_terms)


def _clauses(word: str) -> int:
    """An upper bound of the tokens the index's analyzer makes of one ``\\w+`` word: one per CJK character,
    one per run of other characters."""
    if word.isascii():
        return 1
    return len(CJK_CHARACTER.findall(word)) + sum(1 for run in CJK_CHARACTER.split(word) if run)


def _bounded(word: str) -> str:
    """The word as queried: unchanged when short; a long CJK run cut to :data:`MAX_TERM_CHARS`; "" for any
    other over-long word (see the module docstring)."""
    if len(word) <= MAX_TERM_CHARS:
        return word
    if not word.isascii() and CJK_CHARACTER.match(word):
        return word[:MAX_TERM_CHARS]
    return ""


def _query(words: list[str], max_terms: int) -> str:
    # A \w+ word holds no Lucene special character, and lower-cased it cannot be an operator: the terms
    # need no escaping (a chunk's name terms are built for every chunk written, so this is on the load path).
    terms: dict[str, None] = {}
    clauses = 0
    for word in words:
        lowered = _bounded(word.lower())
        if not lowered or lowered in STOPWORDS or lowered in terms:
            continue
        cost = _clauses(lowered)
        if clauses + cost > MAX_CLAUSES:
            break
        terms[lowered] = None
        clauses += cost
        if len(terms) >= max_terms:
            break
    return " ".join(terms)


# A CJK character (a token of its own, as the full-text analyzer makes it) or a run of other characters.
_LOOKUP_PART = re.compile(f"[{CJK_CHARACTERS}]|[^{CJK_CHARACTERS}]+")


def lookup_terms(name_terms: str) -> list[str]:
    """The terms a chunk's stored ``name_terms`` (:func:`~kg.store.lucene.name_query`) look titles up by: each
    term, except that a term holding CJK characters gives each of them and the runs between them (a Chinese
    title is a run of characters inside the chunk's longer run, as the full-text analyzer splits it)."""
    terms: dict[str, None] = {}
    for term in name_terms.split():
        if not has_cjk(term):
            terms[term] = None
            continue
        terms.update((part, None) for part in _LOOKUP_PART.findall(term))
    return list(terms)
