"""REFERENCES from explicit mentions of another loaded document's title in a chunk's text.

A document names another when one of its chunks holds the other's title verbatim: the same characters
(case-sensitive, any run of whitespace for a space), as whole words. Both directions are found in the
database, through the full-text indexes, for every document written since it was last linked (it carries
``mentions_pending``):

* incoming: the title's phrase query on the chunks' text field finds the chunks that may name it;
* outgoing: each of the document's chunks queries the title index with its name terms (the words that
  can be part of a name, stored at load time), which finds the titles it may name.

Candidates are then kept only if the chunk's text matches the title's verbatim pattern, a Java regular
expression stored on the document at write time (``mention_pattern``). The linking runs after the
writer's commit, when the eventually consistent indexes hold the new chunks and titles; an interrupted run
leaves the flag set and the next load finishes it. Each REFERENCES so made records the mentioning chunks
(``mention_chunks``), so it can be traced to the text that made it.

Titles that cannot be told from ordinary words are not linked: under 4 characters, without a name-like
word (all lower-case), or a single generic heading word such as "Introduction"; nor are titles over
:data:`MAX_TITLE_CHARS` characters (a first line taken as a title, not a name).

A batch whose linking query fails is linked again one document at a time, so one document's failure never
fails another's; a document whose own linking fails is no longer pending (it would otherwise fail every
later load) and keeps the reason in ``mentions_error``. :func:`link_title_mentions` reports those
documents, so a load can fail the file that holds them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kg.errors import Neo4jError, Neo4jUnavailable
from kg.shared.text import is_cjk
from kg.store.base import GraphStore
from kg.store.lucene import STOPWORDS, escape_lucene
from kg.store.queries import MENTIONS_PENDING

__all__ = ["MAX_TITLE_CHARS", "MentionKeys", "link_title_mentions", "mention_keys"]

MAX_TITLE_CHARS = 200

# One-word titles that name a kind of text, not a document: they would "mention" half the corpus.
_GENERIC = frozenset(
    """abstract appendix background chapter conclusion conclusions contents document draft foreword glossary index
    introduction notes overview preface readme references summary untitled""".split()  # noqa: SIM905 - a word list reads better as text
)
_WORD = re.compile(r"\w+", re.UNICODE)
# Not a letter or digit: backslash-escaped, which Java reads as the character itself.
_LITERAL = re.compile(r"[\W_]")
# Java regex: no letter, digit or underscore just before / after a title that starts / ends with one.
_BEFORE, _AFTER = r"(?<![\p{L}\p{N}_])", r"(?![\p{L}\p{N}_])"


@dataclass(frozen=True, slots=True)
class MentionKeys:
    """The two keys a title is found by: a Lucene phrase query on chunk text, and the verbatim pattern."""

    query: str
    pattern: str


def _bounded(ch: str) -> bool:
    """Whether a title's edge character needs a word boundary (not in scripts written without spaces)."""
    return (ch.isalnum() or ch == "_") and not is_cjk(ch)


def _backslashed(match: re.Match[str]) -> str:
    return "\\" + match.group()  # a function: several times faster than a template replacement


def mention_keys(title: str) -> MentionKeys | None:
    """The keys that find mentions of ``title``, or None when the title is too ordinary to link by."""
    clean = " ".join(title.split())
    words = _WORD.findall(clean)
    named = [w for w in words if not w.islower() and w.lower() not in STOPWORDS]
    if not 4 <= len(clean) <= MAX_TITLE_CHARS or not named or (len(words) == 1 and clean.lower() in _GENERIC):
        return None
    body = r"\s+".join(_LITERAL.sub(_backslashed, part) for part in clean.split(" "))
    pattern = "(?s).*" + (_BEFORE if _bounded(clean[0]) else "") + body + (_AFTER if _bounded(clean[-1]) else "") + ".*"
    return MentionKeys(query=f'text:"{escape_lucene(clean)}"', pattern=pattern)


def link_title_mentions(store: GraphStore, *, batch_size: int = 200, incoming_candidates: int = 2000,
                        outgoing_candidates: int = 50, failed: dict[str, str] | None = None) -> int:
    """Link every document still marked ``mentions_pending``, ``batch_size`` documents per transaction;
    returns the number of documents linked. ``incoming_candidates`` bounds the chunks examined per title,
    ``outgoing_candidates`` the titles examined per chunk. Documents whose linking failed are added to
    ``failed`` (id -> reason) and are pending no more; only an unavailable server stops the linking."""
    linked = 0

    def link(ids: list[str]) -> None:
        store.write("graph/link_mentions", ids=ids, incoming=incoming_candidates, outgoing=outgoing_candidates)

    while True:
        ids = [row["id"] for row in store.read(MENTIONS_PENDING, limit=batch_size)]
        if not ids:
            return linked
        try:
            link(ids)
            linked += len(ids)
            continue
        except Neo4jUnavailable:
            raise
        except Neo4jError:
            pass
        for one in ids:  # isolate the document whose linking fails
            try:
                link([one])
                linked += 1
            except Neo4jUnavailable:
                raise
            except Neo4jError as exc:
                reason = str(exc).splitlines()[0]
                store.write("graph/mentions_failed", id=one, error=reason)
                if failed is not None:
                    failed[one] = reason
