"""Turning a user's text into a safe Lucene query for Neo4j's full-text indexes.

A question typed by a person is not Lucene syntax: ``"(1990)"``, ``C++``, ``AT&T`` or a trailing ``?``
would be parsed as operators or fail. :func:`escape_lucene` backslash-escapes every special character and
lower-cases the boolean words (the classic query parser only treats upper-case ``AND``/``OR``/``NOT`` as
operators), so the text is matched literally. :func:`lucene_query` builds what retrieval sends: the
distinct content words of the text, each escaped, joined as an OR of terms (BM25 then weighs them).

>>> escape_lucene('AND (a:b) "c"')
'and \\\\(a\\\\:b\\\\) \\\\"c\\\\"'
>>> lucene_query("Who wrote C++ (1985)?")
'wrote c 1985'
"""

from __future__ import annotations

import re

__all__ = ["STOPWORDS", "escape_lucene", "lucene_query"]

_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
_OPERATOR = re.compile(r"\b(AND|OR|NOT|TO)\b")
_WORD = re.compile(r"\w+", re.UNICODE)

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


def lucene_query(text: str, *, max_terms: int = 64) -> str:
    """An OR query of the distinct non-stopword terms of ``text`` (at most ``max_terms``); ``""`` when the
    text has none, which callers must not send to the index (Lucene rejects an empty query)."""
    terms: list[str] = []
    seen: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if word in STOPWORDS or word in seen:
            continue
        seen.add(word)
        terms.append(escape_lucene(word))
        if len(terms) >= max_terms:
            break
    return " ".join(terms)
