"""REFERENCES from explicit mentions of another loaded document's title in a chunk's text.

A document names another when one of its chunks holds the other's title verbatim: the same characters
(case-sensitive, any run of whitespace for a space), as whole words. Both directions are found in the
database, through the full-text indexes, for every document written since it was last linked (it carries
``mentions_pending``):

* incoming: the title's phrase query on the chunks' text field finds the chunks that may name it;
* outgoing: each of the document's chunks looks its name terms (the words that can be part of a name,
  stored at load time) up in ``Document.mention_key``, which finds the titles it may name.

Every linkable title is keyed by one of its own name terms (:func:`choose_mention_key`), the one that keys the
fewest documents when it is written, and a chunk that holds the title verbatim holds that term among its own;
the terms are those of the title without its trailing disambiguation (``"The Boys (1991 film)"`` is keyed by
``boys``, not ``1991``), since retrieval's title links look titles up by the name a question or a passage
calls them (:mod:`kg.retrieval.links`):
an index seek per chunk term finds every title it may name, and no key is shared by many titles. Looking titles
up in the title full-text index with the chunk's terms instead scored every title holding any of them: one
frequent title word (``Place`` in every ``bench scale`` title, ``River`` or ``John`` in an encyclopaedia)
made each chunk's lookup grow with the corpus, quadratic in all (10,000 passages: 44 s of a 97 s ingest).
Documents written before titles were keyed, or keyed by a disambiguation term, are keyed again by the first link
after the upgrade (:func:`ensure_mention_keys`).

Candidates are then kept only if the chunk's text matches the title's verbatim pattern, a Java regular
expression stored on the document at write time (``mention_pattern``). The linking runs after the
writer's commit, when the eventually consistent indexes hold the new chunks and titles; an interrupted run
leaves the flag set and the next load finishes it. Each REFERENCES so made records the mentioning chunks
(``mention_chunks``), so it can be traced to the text that made it.

A document is mentioned by its title, unless the title is an identifier or a file name its own text never uses:
then by the name its opening gives its subject, as an encyclopaedia entry or a glossary opens ("Shirley Temple
Black (April 23, 1928 - 2014) was an American actress"), when it opens with one (:func:`mention_name`). Passages
loaded without a meaningful title are then found by the name other passages call them, as titled ones are
by their titles. The name is stored as ``mention_name``; documents written before it existed are mentioned by
their title until the next load names them (:func:`ensure_mention_keys`) and links the renamed again. A
biography's lead names a person in full ("Michael Trent Reznor (born May 17, 1965) is ...") where others write
"Trent Reznor": such a document is also mentioned by the short forms of its name (:func:`name_variants`), all
stored in order as ``mention_names``.

Titles that cannot be told from ordinary words are not linked: under 4 characters, without a name-like
word (all lower-case), or a single generic heading word such as "Introduction"; nor are titles over
:data:`MAX_TITLE_CHARS` characters (a first line taken as a title, not a name).

A batch whose linking query fails is linked again one document at a time, so one document's failure never
fails another's; a document whose own linking fails is no longer pending (it would otherwise fail every
later load) and keeps the reason in ``mentions_error``. :func:`link_title_mentions` reports those
documents, so a load can fail the file that holds them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kg.errors import Neo4jError, Neo4jUnavailable
from kg.shared.text import is_cjk, title_core
from kg.store.base import GraphStore
from kg.store.lucene import STOPWORDS, escape_lucene, lookup_terms, name_query
from kg.store.queries import (
    MENTION_KEY_COUNTS,
    MENTION_KEYS_STATE,
    MENTIONS_PENDING,
    QUALIFIED_TITLES,
    TITLES_USED,
    UNKEYED_TITLES,
    UNNAMED_DOCUMENTS,
    TitleRow,
    UnnamedDocumentRow,
)

__all__ = ["MAX_TITLE_CHARS", "MentionKeys", "assign_mention_keys", "choose_mention_key", "ensure_mention_keys",
           "link_title_mentions", "mention_keys", "mention_name", "mention_names", "name_variants", "opening_name"]

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
_KEYED_PAGE = 5000
# How titles are keyed: 1, every term of the title; 2, the terms of its core (no trailing disambiguation); 3, the
# terms of the document's mention_name; 4, the terms its mention_names share. A graph keyed by an older version
# is keyed again once (ensure_mention_keys).
MENTION_KEYS_VERSION = 4


@dataclass(frozen=True, slots=True)
class MentionKeys:
    """What a title is found by: a Lucene phrase query on chunk text, the verbatim pattern, and the terms a
    chunk that names it looks it up by (one of them becomes its ``mention_key``; none when every name word of
    the title is too long to be a query term)."""

    query: str
    pattern: str
    terms: tuple[str, ...]


# Lower-case words inside names ("Bank of America", "Kiss and Tell", "Ludwig van Beethoven").
_NAME_JOINERS = frozenset("of the and de la le du da di del von van der y &".split())  # noqa: SIM905 - a word list reads better as text
_ARTICLES = frozenset({"The", "A", "An"})
_OPENING_TOKENS = 12
_QUOTES = "\"'\u201c\u201d\u2018\u2019"
_HONORIFICS = frozenset({"Sir", "Dame", "Lord", "Lady", "Dr", "Dr.", "General", "Colonel", "Captain", "Admiral"})
_GENERATIONS = frozenset({"Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV"})
# After a biography's full name (and at most a few post-nominals: "Sir John Downer, KCMG, KC (6 July 1843 -"), a
# parenthesis with the dates of a life: a birth, a death, or a span of years ("(born 1965)", "(1894 - 1982)"), not
# a company's founding or a film's year.
_LIFE_DATES = re.compile(r"\s*(?:,\s*[A-Z][\w.]*\s*){0,4}\("
                         r"(?=[^)]{0,120}?(?:\bborn\b|\bdied\b|\d{3,4}\s*[-\u2013\u2014]))")
_NICKNAME = re.compile(r"[\"\u201c]([^\"\u201d]{1,25})[\"\u201d]")


def opening_name(text: str) -> str:
    """The name ``text`` opens with: its leading run of capitalised words and the joiners between them, up to
    the first other word or punctuation, without a leading article; ``""`` unless it holds two capitalised
    words or more (a single one is mostly a sentence's first word), or when it starts with a function word
    ("In New York, ...").

    >>> opening_name("Shirley Temple Black (April 23, 1928 - 2014) was an American actress.")
    'Shirley Temple Black'
    >>> opening_name("The Hythrun Chronicles is a fantasy series.")
    'Hythrun Chronicles'
    >>> opening_name("Kiss and Tell is a 1945 film."), opening_name("Hamburg is a city."), opening_name("In New York")
    ('Kiss and Tell', '', '')
    """
    words: list[str] = []
    for token in text[:400].split(None, _OPENING_TOKENS)[:_OPENING_TOKENS]:
        word = token.strip(_QUOTES)
        bare = word.rstrip(",;:.!?")
        # Punctuation ends a name, except an initial's or an abbreviation's full stop ("John F. Kennedy").
        abbreviated = word.endswith(".") and bare[:1].isupper() and (len(bare) == 1 or "." in bare)
        if bare[:1].isupper():
            words.append(word if abbreviated else bare)
        elif bare in _NAME_JOINERS and words:
            words.append(bare)
        else:
            break
        if bare != word and not abbreviated:
            break
    while words and words[-1] in _NAME_JOINERS:
        words.pop()
    if words and words[0] in _ARTICLES:
        words = words[1:]
    if not words or words[0].lower() in STOPWORDS or sum(1 for w in words if w[:1].isupper()) < 2:
        return ""
    return " ".join(words)


def name_variants(name: str, text: str) -> tuple[str, ...]:
    """The short forms others call a person by whom ``text``, a biography's lead, names in full as ``name``:
    first and last name, the last two names, a quoted nickname and the last name, and the name without an
    honorific. None unless the name has three words or more, none of them a joiner ("Bank of America Tower"),
    and the text follows it with the dates of a life (a parenthesis with a birth, a death or a span of years):
    the encyclopaedic lead ("Michael Trent Reznor (born May 17, 1965) is ...") whose subject others name in
    short ("Trent Reznor").

    >>> name_variants("Matthew Stephen M. Ward", 'Matthew Stephen "M." Ward (born October 4, 1973) is a singer')
    ('M. Ward', 'Matthew Ward')
    >>> name_variants("Sir John William Downer", "Sir John William Downer, KCMG, KC (6 July 1843 - 1915) was")
    ('John Downer', 'John William Downer', 'William Downer')
    >>> name_variants("Dark Knight Rises", "Dark Knight Rises is a 2012 film"), name_variants("Dale Brown", "")
    ((), ())
    """
    words = name.split()
    if len(words) < 3 or any(w in _NAME_JOINERS for w in words):
        return ()
    last = words[-1]
    at = text.find(last, max(text.find(words[0]), 0))
    if at < 0 or not _LIFE_DATES.match(text, at + len(last)):
        return ()
    given = words[1:] if words[0] in _HONORIFICS else words
    family = given[:-1] if given[-1] in _GENERATIONS else given  # "Silas Daniels III" is Silas Daniels
    if len(family) < 2:
        return ()
    variants = {f"{family[0]} {family[-1]}", f"{family[-2]} {family[-1]}"}
    if given is not words:
        variants.add(" ".join(given))
    nickname = _NICKNAME.search(text, 0, at)
    if nickname and nickname.group(1).strip() in words:
        variants.add(f"{nickname.group(1).strip()} {family[-1]}")
    return tuple(sorted(variants - {name}))


def mention_names(title: str, text: str) -> tuple[str, ...]:
    """Every name other texts call a document by, the first its :func:`mention_name`: a name its opening gives
    it is followed by that name's :func:`name_variants` (a title is not varied: it is the name chosen for it)."""
    return _with_variants(title, mention_name(title, text), text[:400])


def _with_variants(title: str, name: str, opening: str) -> tuple[str, ...]:
    return (name, *name_variants(name, opening)) if name != title else (name,)


def mention_name(title: str, text: str) -> str:
    """The name other texts call a document by: its title, or the name its text opens with
    (:func:`opening_name`) when the title is an identifier or a file name (one token with a digit or an
    underscore, or all lower-case: ``P3f1c0a9e``, ``pump_manual``), the text never uses it, and the name
    shares no word with it. A title of words stays the name even when a passage never uses it: a paragraph
    of "Green Day" that opens "Billie Joe Armstrong formed the band" is still called Green Day.

    >>> mention_name("P3f1c0a9e", "Kiss and Tell is a 1945 film."), mention_name("Green Day", "Billie Joe Armstrong")
    ('Kiss and Tell', 'Green Day')
    """
    core = title_core(title)
    return _named(title, text, uses_title=bool(core) and core in text)


def _identifier(title: str) -> bool:
    """Whether a title is an identifier or a file name rather than a name (see :func:`mention_name`)."""
    token = title.strip()
    return bool(token) and " " not in token and (token.islower() or "_" in token or any(c.isdigit() for c in token))


def _named(title: str, opening: str, *, uses_title: bool) -> str:
    if uses_title or (title.strip() and not _identifier(title)):
        return title
    name = opening_name(opening)
    shared = {w.lower() for w in _WORD.findall(title_core(title))} & {w.lower() for w in _WORD.findall(name)}
    return name if name and not shared else title


def choose_mention_key(terms: Iterable[str], counts: Mapping[str, int]) -> str:
    """The term a title is keyed by: the one keying the fewest documents (``counts``), the longest on a tie;
    ``""`` (found by no chunk) when there is none."""
    return min(terms, key=lambda t: (counts.get(t, 0), -len(t), t), default="")


def assign_mention_keys(store: GraphStore, titles: Mapping[str, MentionKeys]) -> dict[str, str]:
    """Keys for documents about to be written (id -> its title's keys): each the term keying the fewest stored
    documents and of those keyed before it here, so a frequent title word keys few titles (one read)."""
    wanted = sorted({t for keys in titles.values() for t in keys.terms})
    counts = {r["term"]: r["documents"] for r in store.read(MENTION_KEY_COUNTS, terms=wanted)} if wanted else {}
    chosen = {}
    for did, keys in titles.items():
        key = chosen[did] = choose_mention_key(keys.terms, counts)
        counts[key] = counts.get(key, 0) + 1
    return chosen


def _bounded(ch: str) -> bool:
    """Whether a title's edge character needs a word boundary (not in scripts written without spaces)."""
    return (ch.isalnum() or ch == "_") and not is_cjk(ch)


def _backslashed(match: re.Match[str]) -> str:
    return "\\" + match.group()  # a function: several times faster than a template replacement


# A pure function of the names, asked twice per document written (choosing its key, then its node's properties):
# a cache as large as a few write groups makes the second ask free.
@functools.lru_cache(maxsize=8192)
def mention_keys(title: str, *variants: str) -> MentionKeys | None:
    """The keys that find mentions of ``title``, or of any of its ``variants`` (:func:`mention_names`), or None
    when the title is too ordinary to link by. A variant adds its phrase query and its verbatim pattern as
    alternatives, and keeps of the lookup terms only those every name holds (a person's last name), so that a
    chunk naming any of them looks the document up."""
    clean = " ".join(title.split())
    words = _WORD.findall(clean)
    named = [w for w in words if not w.islower() and w.lower() not in STOPWORDS]
    if not 4 <= len(clean) <= MAX_TITLE_CHARS or not named or (len(words) == 1 and clean.lower() in _GENERIC):
        return None
    names = [clean, *(" ".join(v.split()) for v in variants)]
    verbatim = [_verbatim(name) for name in names]
    terms = lookup_terms(name_query(title_core(clean) or clean))
    for variant in names[1:]:
        held = set(lookup_terms(name_query(variant)))
        terms = [t for t in terms if t in held]
    return MentionKeys(query=" OR ".join(f'text:"{escape_lucene(name)}"' for name in names),
                       pattern="(?s).*" + (verbatim[0] if not variants else "(?:" + "|".join(verbatim) + ")") + ".*",
                       terms=tuple(terms))


def _verbatim(name: str) -> str:
    """A Java regular expression for ``name`` as whole words, any run of whitespace for a space."""
    body = r"\s+".join(_LITERAL.sub(_backslashed, part) for part in name.split(" "))
    return (_BEFORE if _bounded(name[0]) else "") + body + (_AFTER if _bounded(name[-1]) else "")


def ensure_mention_keys(store: GraphStore) -> int:
    """Key the linkable documents written before titles were keyed, key again those with a disambiguated
    title keyed by an older :data:`MENTION_KEYS_VERSION`, and name the documents written before documents were
    named (:func:`mention_name`; the renamed are linked again), once per graph: the meta node records the
    version; returns how many were keyed or named."""
    state = store.read(MENTION_KEYS_STATE)
    version = state[0]["version"] if state else None
    if version == MENTION_KEYS_VERSION:
        return 0
    keyed = 0
    while rows := store.read(UNKEYED_TITLES, limit=_KEYED_PAGE):
        keyed += _key_titles(store, rows)
    if version is not None:  # keyed by version 1 (stored as true): every term of the title, a qualifier's too
        after = ""
        while rows := store.read(QUALIFIED_TITLES, after=after, limit=_KEYED_PAGE):
            keyed += _key_titles(store, rows)
            after = rows[-1]["id"]
    if version == 3:  # named by their openings without the names' short forms: named again below
        while store.write("graph/forget_opening_names", limit=_KEYED_PAGE)[0]["forgotten"]:
            pass
    after = ""
    while unnamed := store.read(UNNAMED_DOCUMENTS, after=after, limit=_KEYED_PAGE):
        keyed += _name_documents(store, unnamed)
        after = unnamed[-1]["id"]
    store.write("graph/mention_keys_done", version=MENTION_KEYS_VERSION)
    return keyed


def _name_documents(store: GraphStore, rows: list[UnnamedDocumentRow]) -> int:
    """Name a page of documents as :func:`mention_name` names new ones, their whole text read as "any chunk
    holds the title's core" (one query)."""
    cores = {r["id"]: title_core(r["title"] or "") for r in rows}
    asked = [{"id": did, "core": core} for did, core in cores.items() if core]
    used = {r["id"]: r["used"] for r in store.read(TITLES_USED, rows=asked)} if asked else {}
    names: dict[str, tuple[str, ...]] = {}
    for r in rows:
        title = r["title"] or ""
        name = _named(title, r["opening"], uses_title=used.get(r["id"], False))
        names[r["id"]] = _with_variants(title, name, r["opening"])
    renamed = {r["id"]: mention_keys(*names[r["id"]]) for r in rows if names[r["id"]][0] != (r["title"] or "")}
    chosen = assign_mention_keys(store, {did: keys for did, keys in renamed.items() if keys is not None})
    store.write("graph/set_mention_names", rows=[
        {"id": did, "name": all_names[0], "renamed": did in renamed,
         "names": list(all_names) if len(all_names) > 1 else None,
         "query": keys.query if (keys := renamed.get(did)) else None,
         "pattern": keys.pattern if keys else None, "key": chosen.get(did) if keys else None}
        for did, all_names in names.items()])
    return len(rows)


def _key_titles(store: GraphStore, rows: Iterable[TitleRow]) -> int:
    titles = {r["id"]: mention_keys(r["title"] or "") for r in rows}
    keys = assign_mention_keys(store, {k: v for k, v in titles.items() if v is not None})
    store.write("graph/set_mention_keys", rows=[{"id": did, "key": keys.get(did, "")} for did in titles])
    return len(titles)


def link_title_mentions(store: GraphStore, *, batch_size: int = 200, incoming_candidates: int = 2000,
                        outgoing_candidates: int = 1000, failed: dict[str, str] | None = None) -> int:
    """Link every document still marked ``mentions_pending``, ``batch_size`` documents per transaction;
    returns the number of documents linked. ``incoming_candidates`` bounds the chunks examined per title,
    ``outgoing_candidates`` the titles examined per term of a chunk (the titles it keys: few, see the module
    docstring). Documents whose linking failed are added to
    ``failed`` (id -> reason) and are pending no more; only an unavailable server stops the linking."""
    linked = 0
    ensure_mention_keys(store)

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
