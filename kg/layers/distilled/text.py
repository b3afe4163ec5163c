"""Text helpers of the distilled layer: sentences and statements, name keys, ROUGE-L, keyphrases.

All of it is pure Python over plain strings, for English and Chinese alike: CJK text is compared by
characters, other text by lower-cased words.

>>> statements("Neo4j is a graph database. It was released in 2007.")
['Neo4j is a graph database.', 'It was released in 2007.']
>>> name_key("Neo4j, Inc.") == name_key("neo4j inc")
True
>>> round(rouge_l("the cat sat", "the cat sat on the mat").precision, 2)
1.0
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from kg.shared.text import estimate_tokens, has_cjk, is_cjk, text_key

__all__ = [
    "STOPWORDS",
    "NameBlocks",
    "RougeScore",
    "fact_listing",
    "fusion_keys",
    "keyphrases",
    "name_blocks",
    "name_key",
    "name_similarity",
    "rouge_l",
    "sentences",
    "statements",
    "text_key",
    "tokens",
]

# A sentence ends at . ! ? (or their CJK forms) followed by space or the end; common abbreviations and
# initials ("U.S.", "Dr.", "J. R. R.") do not end one.
_END = re.compile("(?<=[.!?])[\"'\u201d\u2019)\\]]*\\s+|(?<=[\u3002\uff01\uff1f\uff1b])")
_ABBREV = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|Mt|vs|etc|Inc|Ltd|Co|Corp|No|Fig|Vol|Jan|Feb|Mar|Apr|Jun|Jul|Aug|"
    r"Sep|Sept|Oct|Nov|Dec|e\.g|i\.e)|\b[A-Z]|\b(?:[A-Z]\.)+[A-Z])\.$"
)
# Clause boundaries used to cut sentences longer than ``max_words`` into atomic statements.
_CLAUSE = re.compile(";\\s+|,\\s+(?=(?:and|but|while|whereas|which|who|although|because)\\b)|\uff0c|\uff1b")
_WORD = re.compile(r"\w+", re.UNICODE)
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
STOPWORDS = frozenset(
    [
        "a", "an", "the", "and", "or", "but", "of", "in", "on", "at", "to", "for", "from", "by", "with", "as", "is",
        "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "he", "she",
        "they", "his", "her", "their", "them", "we", "our", "you", "your", "i", "not", "no", "also", "has", "have",
        "had", "do", "does", "did", "which", "who", "whom", "whose", "what", "when", "where", "why", "how", "than",
        "then", "there", "here", "into", "onto", "over", "under", "after", "before", "about", "between", "during",
        "such", "can", "could", "may", "might", "will", "would", "shall", "should", "one", "two", "three", "first",
        "second", "new", "more", "most", "other", "some", "any", "all", "each", "both", "only", "own", "same", "so",
        "very", "just", "s"
    ]
)


def tokens(text: str) -> list[str]:
    """Comparison units: CJK characters one by one, other words lower-cased."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if has_cjk(word):
            out.extend(word)
        else:
            out.append(word)
    return out


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (English and Chinese punctuation), keeping abbreviations whole."""
    parts: list[str] = []
    start = 0
    for match in _END.finditer(text):
        piece = text[start:match.start()].rstrip()
        if not piece or _ABBREV.search(piece.split()[-1] if piece.split() else piece):
            continue
        parts.append(text[start:match.end()].strip())
        start = match.end()
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return [p for p in parts if p]


def statements(text: str, *, max_words: int = 40) -> list[str]:
    """Atomic statements: sentences, with sentences longer than ``max_words`` cut at clause boundaries."""
    out: list[str] = []
    for sentence in sentences(text):
        if len(tokens(sentence)) <= max_words:
            out.append(sentence)
            continue
        clauses = [c.strip(" ,;") for c in _CLAUSE.split(sentence)]
        out.extend(c for c in clauses if len(tokens(c)) >= 3)
    return out


_DIGITS = re.compile(r"\d+")


def name_key(name: str) -> str:
    """The normalised name used in entity keys: NFKC, case-folded, accents and punctuation dropped, a
    leading English article removed, spaces collapsed (removed between CJK characters)."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name).casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = _PUNCT.sub(" ", text)
    words = text.split()
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    joined = " ".join(words)
    return re.sub(r"(?<=[^\x00-\x7f]) (?=[^\x00-\x7f])", "", joined)


# Longer names (a title, a first line taken for a name) get their whole key only: their shorter forms would be
# many, and a name that long is matched by its exact key or not at all.
_BLOCK_MAX_WORDS = 8


@dataclass(frozen=True)
class NameBlocks:
    """The keys an entity is stored under (``stored``) and a new name looks entities up by (``asked``) for the
    fuzzy step of entity resolution: the name's set of words (``=``), and for a name of three words or more
    each set one word shorter (``-``). Two names meet when they hold the same words in any order, or when one
    holds every word of the other and one more, the shorter keeping at least two, words of a name of several
    taken in the singular: "Barack H. Obama" meets "Barack Obama", "President Bill Clinton" meets "Bill
    Clinton" and "Grammy Awards" meets "Grammy Award", while "Kenneth Williams" never meets
    "Williams", nor "Albanian" "Albania", nor two names one word apart ("University of California Davis" and
    "... Berkeley"). Every key is an exact term, so a lookup costs the same at any number of entities."""

    stored: tuple[str, ...]
    asked: tuple[str, ...]


def _singular(word: str) -> str:
    """An English plural's singular, roughly ("awards" -> "award", "breweries" -> "brewery"): only a block key
    is made of it, so a wrong guess adds a candidate, never a merge."""
    if len(word) <= 3 or not word.isascii():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def name_blocks(name: str) -> NameBlocks:
    """The block keys of ``name`` (:class:`NameBlocks`).

    >>> name_blocks("Barack H. Obama").stored[0], "=barack obama" in name_blocks("Barack H. Obama").asked
    ('=barack h obama', True)
    """
    words = name_key(name).split()
    # In a name of several words a plural names the same thing ("Grammy Awards"); a single word in the plural
    # is as often another name ("Winters", "Burns").
    words = sorted({_singular(w) for w in words} if len(words) >= 2 else set(words))
    if not words:
        return NameBlocks((), ())
    whole = " ".join(words)
    shorter = ([" ".join(words[:i] + words[i + 1:]) for i in range(len(words))]
               if 3 <= len(words) <= _BLOCK_MAX_WORDS else [])
    longer = ("-" + whole,) if len(words) >= 2 else ()  # a stored "-" key has two words at least
    return NameBlocks(stored=("=" + whole, *("-" + s for s in shorter)),
                      asked=("=" + whole, *longer, *("=" + s for s in shorter)))


# MinHash-LSH over a text's content words: FUSION_BANDS keys, each FUSION_ROWS minimums of one hash function
# each. Two texts whose word sets have Jaccard similarity j share a key with probability 1 - (1 - j**3) ** 10:
# 0.99 at j = 0.75, 0.90 at 0.6, 0.27 at 0.3. Changing any of this re-keys every stored node (FUSION_KEYS_VERSION).
FUSION_BANDS, FUSION_ROWS = 10, 3
FUSION_KEYS_VERSION = 1


def _hash_parameters(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Multiply-shift hash functions' odd multipliers and offsets, derived from fixed strings, so stored keys
    never depend on a random generator's version."""
    words = [int.from_bytes(hashlib.blake2b(f"strata-fusion-{i}".encode(), digest_size=16).digest(), "little")
             for i in range(count)]
    multipliers = np.array([(w & 0xFFFFFFFFFFFFFFFF) | 1 for w in words], dtype=np.uint64)
    offsets = np.array([w >> 64 for w in words], dtype=np.uint64)
    return multipliers, offsets


_MULTIPLIERS, _OFFSETS = _hash_parameters(FUSION_BANDS * FUSION_ROWS)


@lru_cache(maxsize=65536)
def _word_hash(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")


def fusion_keys(text: str) -> tuple[str, ...]:
    """The MinHash band keys of ``text``'s content words (its words when all are stop words): near-duplicate
    texts share one at least, nearly always, and unrelated texts rarely. PG-RAG fusion looks fact items up by
    them instead of a vector search, whose cost grows with the index (docs/scaling.md).

    >>> len(fusion_keys("Bob Edwards hosted Morning Edition.")), fusion_keys("") == ()
    (10, True)
    >>> near = set(fusion_keys("Edwards hosted Morning Edition, a radio show."))
    >>> bool(near & set(fusion_keys("Bob Edwards hosted Morning Edition, a radio show."))), len(near)
    (True, 10)
    """
    words = set(tokens(text))
    words = (words - STOPWORDS) or words
    if not words:
        return ()
    hashes = np.fromiter((_word_hash(w) for w in sorted(words)), dtype=np.uint64, count=len(words))
    with np.errstate(over="ignore"):  # arithmetic modulo 2**64 is the hash
        minimums = ((hashes[:, None] * _MULTIPLIERS + _OFFSETS) >> np.uint64(32)).min(axis=0)
    bands = minimums.reshape(FUSION_BANDS, FUSION_ROWS)
    return tuple(f"{band}:" + hashlib.blake2b(rows.tobytes(), digest_size=8).hexdigest()
                 for band, rows in enumerate(bands))


def _grams(key: str) -> set[str]:
    if has_cjk(key):
        chars = key.replace(" ", "")
        return {chars[i:i + 2] for i in range(max(len(chars) - 1, 1))}
    padded = f" {key} "
    return {padded[i:i + 3] for i in range(max(len(padded) - 2, 1))}


def name_similarity(a: str, b: str) -> float:
    """Dice coefficient of character trigrams (bigrams for CJK) of two name keys, in [0, 1]; 0 when their
    numbers differ, since "Apollo 11" and "Apollo 13", or "Place 12" and "Place 13", are other things."""
    if _DIGITS.findall(a) != _DIGITS.findall(b):
        return 0.0
    ga, gb = _grams(a), _grams(b)
    if not ga or not gb:
        return 0.0
    return 2 * len(ga & gb) / (len(ga) + len(gb))


@dataclass(frozen=True)
class RougeScore:
    """ROUGE-L of a candidate against a reference: LCS length over each side's length, and their F1."""

    precision: float
    recall: float
    f1: float


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    if len(a) > len(b):
        a, b = b, a
    previous = [0] * (len(a) + 1)
    for token in b:
        current = [0]
        for i, other in enumerate(a):
            current.append(previous[i] + 1 if other == token else max(previous[i + 1], current[i]))
        previous = current
    return previous[-1]


def rouge_l(candidate: str, reference: str) -> RougeScore:
    """ROUGE-L (Lin, 2004) over :func:`tokens`: precision = LCS / |candidate| is how much of a fact item
    the source text supports in order, which is what fact verification asks."""
    cand, ref = tokens(candidate), tokens(reference)
    if not cand or not ref:
        return RougeScore(0.0, 0.0, 0.0)
    lcs = _lcs(cand, ref)
    precision, recall = lcs / len(cand), lcs / len(ref)
    f1 = 0.0 if lcs == 0 else 2 * precision * recall / (precision + recall)
    return RougeScore(precision, recall, f1)


def _terms(text: str) -> list[str]:
    """Candidate keyphrase terms: content words and adjacent content-word bigrams (CJK: character bigrams)."""
    words = [t for t in tokens(text) if t not in STOPWORDS and not t.isdigit() and (len(t) > 2 or is_cjk(t[0]))]
    cjk = [w for w in words if is_cjk(w[0])]
    latin = [w for w in words if not is_cjk(w[0])]
    bigrams = [f"{a} {b}" for a, b in itertools.pairwise(latin)]
    return latin + bigrams + [a + b for a, b in itertools.pairwise(cjk)]


def keyphrases(texts: Sequence[str], *, top: int = 3, min_df: int = 2, max_df_ratio: float = 0.2) -> list[list[str]]:
    """Per text, its ``top`` TF-IDF terms among those shared by at least ``min_df`` texts (so a tag links
    chunks) and by at most ``max_df_ratio`` of them (so it still distinguishes)."""
    counts = [Counter(_terms(t)) for t in texts]
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    n = len(texts)
    limit = max(min_df, int(max_df_ratio * n))
    out: list[list[str]] = []
    for c in counts:
        scored = [(tf * math.log(n / df[term]), term) for term, tf in c.items() if min_df <= df[term] <= limit]
        scored.sort(key=lambda x: (-x[0], x[1]))
        out.append([term for _, term in scored[:top]])
    return out


def fact_listing(facts: Sequence[str], budget_tokens: int) -> str:
    """``facts`` as a bulleted list (``- fact`` lines) of at most ``budget_tokens`` estimated tokens: all of them
    when they fit, else an even sample from first to last (a mind map of a long document still sees its whole
    span), never fewer than one."""
    lines = [f"- {f}" for f in facts]
    sizes = [estimate_tokens(line) + 1 for line in lines]  # + the newline
    if sum(sizes) <= budget_tokens:
        return "\n".join(lines)
    n = max(1, len(lines) * budget_tokens // sum(sizes))
    while True:
        picked = sorted({round(i * (len(lines) - 1) / (n - 1)) for i in range(n)}) if n > 1 else [0]
        if n == 1 or sum(sizes[i] for i in picked) <= budget_tokens:
            return "\n".join(lines[i] for i in picked)
        n -= max(1, n // 10)
