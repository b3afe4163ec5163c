"""The offline extractive answerer: the best evidence sentence across the top hits, and from it the short
span the question asks for (HotpotQA-style short answers), by rules alone.

Sentences of the top hits are scored by the question's content words they contain, weighted by the hit's
rank. When the question asks for a short answer (who, what, which, when, where, how many, yes/no), the
span is a candidate of the expected kind (a name, a number, a date, a frequency) that the question does
not already contain, ranked by the sentence's score and its distance to the question's words. Questions
of the form "X or Y?" pick one of the two options; "Is/Are/Did ...?" questions answer yes or no by whether
every entity they name is found in the evidence with the property asked about.

>>> pick = extract("When was Bob Edwards born?", ["Bob Edwards is a journalist born in 1947."])
>>> (pick.span, pick.hit)
('1947', 0)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from loaders import split_sentences

__all__ = ["Extract", "content_words", "extract", "sentences_of"]

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "is", "are",
    "was", "were", "be", "been", "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
    "did", "does", "do", "that", "this", "these", "those", "it", "its", "as", "than", "into", "about",
    "both", "has", "have", "had", "not", "many", "much", "same", "also", "there", "their", "his", "her",
})
_AUX = frozenset({"is", "are", "was", "were", "did", "do", "does", "can", "could", "has", "have", "had",
                  "will", "would", "should"})
_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
          r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?")
_DATE = re.compile(rf"\b(?:\d{{1,2}} {_MONTH},? \d{{3,4}}|{_MONTH} \d{{1,2}},? \d{{3,4}}|{_MONTH} \d{{3,4}}|"
                   r"(?:1[0-9]|20)\d{2}s?)\b")
_NUMBER = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s?(?:%|percent|million|billion|"
                     r"thousand|km|m|kg|MW|GW|ppm|years?|months?|days?|hours?|people|seats|episodes|"
                     r"[a-z]+s))?(?!\w)")
_FREQUENCY = re.compile(r"\b(?:every|each|once|twice|per)\b(?:\s+(?:\d+|other|two|three|four|six|twelve))?"
                        r"\s+\w+", re.I)
# A name: capitalised words, allowing short lower-case joiners inside ("Bank of England", "Leonardo da Vinci").
_NAME = re.compile(r"\b[A-Z][\w'\u2019.-]*(?:\s+(?:(?:of|the|de|da|von|van|and|del|la|le|du|for|in|on)\s+)*"
                   r"[A-Z0-9][\w'\u2019.-]*)*")
_SOFT_NEWLINE = re.compile(r"(?<=[^\n|])\n(?=[^\n|#\-*\d])")


@dataclass(frozen=True)
class Extract:
    """The chosen answer text, the sentence it came from, the 0-based hit index, and the sentence's support
    (share of the question's content words it contains)."""

    span: str
    sentence: str
    hit: int
    support: float


def _stem(word: str) -> str:
    """A plural's singular, roughly (cities -> city, sites -> site), so counts of shared words agree."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """Lower-cased, roughly singular word tokens without stop words."""
    return {_stem(w) for w in (t.lower() for t in _WORD.findall(text)) if w not in _STOP}


def sentences_of(text: str) -> list[str]:
    """Sentences of a chunk; a single line break inside a hard-wrapped paragraph does not end a sentence
    (it is read as a space), a blank line, a table row or a list item still does."""
    flowing = _SOFT_NEWLINE.sub(" ", text)
    return [" ".join(flowing[a:b].split()) for a, b in split_sentences(flowing) if flowing[a:b].strip()]


_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("frequency", re.compile(r"\bhow (?:often|frequently)\b")),
    ("number", re.compile(r"\bhow (?:many|much|long|old|far|tall|big|large)\b|\bwhat (?:is the )?(?:number|"
                          r"population|percentage|amount)\b")),
    ("when", re.compile(r"\bwhen\b|\b(?:what|which) (?:year|date|decade|century)\b")),
    ("who", re.compile(r"\bwho(?:m|se)?\b")),
    ("where", re.compile(r"\bwhere\b|\b(?:what|which) (?:city|country|state|town|place|county|province)\b")),
    ("what", re.compile(r"\b(?:what|which)\b|^name\b")),
)


def _kind(question: str) -> str:
    """The answer kind a question asks for: yesno, choice, frequency, number, when, who, where, what, or
    sentence (no short answer expected). Kinds are tried in order: a count or a date asked anywhere
    ("... born in what year?") wins over the question's leading "who" or "which"."""
    lowered = question.strip().lower()
    first = lowered.split(" ", 1)[0] if lowered else ""
    if " or " in lowered and (first in _AUX or re.search(r"\b(?:which|who|what)\b", lowered)):
        return "choice"
    if first in _AUX:
        return "yesno"
    found = [(m.start(), kind) for kind, pattern in _KINDS if (m := pattern.search(lowered))]
    return found[0][1] if found else "sentence"


_NOT_NAMES = frozenset({
    "he", "she", "it", "they", "we", "i", "you", "his", "her", "its", "their", "this", "that", "these",
    "those", "there", "the", "a", "an", "in", "on", "at", "after", "before", "during", "when", "while",
    "although", "however", "as", "by", "for", "from", "with", "since", "following", "according", "but",
})


def _names(sentence: str) -> list[tuple[str, int]]:
    """Capitalised spans, split at " and " between two names, without pronouns and leading connectives."""
    found: list[tuple[str, int]] = []
    for m in _NAME.finditer(sentence):
        position = m.start()
        for part in re.split(r" and (?=[A-Z])", m.group()):
            span = re.sub(r"['\u2019]s$", "", part.rstrip(".,"))
            words = span.split()
            while words and words[0].lower() in _NOT_NAMES:
                words = words[1:]
            if words:
                found.append((" ".join(words), position))
            position += len(part) + 5
    return found


def _candidates(sentence: str, kind: str) -> list[tuple[str, int]]:
    """``(span, position)`` candidates of ``kind`` in ``sentence``."""
    if kind == "when":
        found = [(m.group(), m.start()) for m in _DATE.finditer(sentence)]
    elif kind == "number":
        found = [(m.group(), m.start()) for m in _NUMBER.finditer(sentence)]
    elif kind == "frequency":
        found = [(m.group(), m.start()) for m in _FREQUENCY.finditer(sentence)]
    else:
        found = _names(sentence)
    return [(s.strip(), p) for s, p in found if s.strip()]


def _new(span: str, question_words: set[str]) -> bool:
    """A candidate adds something: not every word of it is already in the question."""
    words = content_words(span)
    return bool(words) and not words <= question_words


def _proximity(sentence: str, position: int, question_words: set[str]) -> float:
    """Closeness of a span at ``position`` to the question's words in the sentence (1 at distance 0)."""
    spots = [m.start() for m in _WORD.finditer(sentence) if _stem(m.group().lower()) in question_words]
    if not spots:
        return 0.0
    return 1.0 / (1.0 + min(abs(position - s) for s in spots) / 40.0)


def _choice(question: str, scored: list[tuple[float, str, int]]) -> tuple[str, int] | None:
    """For "X or Y?": the option better supported by the top sentences (the earlier-ranked wins ties)."""
    body = question.rstrip(" ?")
    left, _, right = body.rpartition(" or ")
    right_opt = right.strip(" ,")
    names = [m.group() for m in _NAME.finditer(left)]
    left_opt = names[-1] if names else left.split(",")[-1].strip()
    options = [o for o in (left_opt, right_opt) if o]
    if len(options) < 2:
        return None
    earlier = re.search(r"\b(?:first|earlier|earliest|older|oldest|before)\b", question, re.I)
    later = re.search(r"\b(?:later|latest|last|younger|youngest|newer|newest|more recent)\b", question, re.I)
    if earlier or later:  # a comparison in time: the option whose evidence names the earlier (later) year
        dated: list[tuple[int, str, int]] = []
        for option in options:
            words = content_words(option)
            years = [(int(y[:4]), h) for _, sentence, h in scored
                     if len(words & content_words(sentence)) * 2 >= len(words)
                     for y in re.findall(r"\b(?:1[0-9]|20)\d{2}\b", sentence)]
            if years:
                year, hit = min(years) if earlier else max(years)
                dated.append((year, option, hit))
        if len(dated) == 2 and dated[0][0] != dated[1][0]:
            _, option, hit = (min if earlier else max)(dated)
            return option, hit
    best: tuple[float, str, int] | None = None
    for option in options:
        words = content_words(option)
        support = sum(score * len(words & content_words(s)) / max(len(words), 1) for score, s, _ in scored[:6])
        hit = next((h for _, s, h in scored if words & content_words(s)), scored[0][2] if scored else 0)
        if best is None or support > best[0]:
            best = (support, option, hit)
    return (best[1], best[2]) if best else None


def _yes_no(question: str, texts: Sequence[str]) -> tuple[str, int]:
    """Yes when every named entity of the question is found in some evidence text with the question's
    other content words (at least half of them), else no; the hit cited is the first such text."""
    names = [part for m in _NAME.finditer(question.split(" ", 1)[-1]) for part in m.group().split(" and ")]
    name_words = set().union(*(content_words(n) for n in names)) if names else set()
    rest = content_words(question) - name_words
    first_hit = 0
    for i, name in enumerate(names or [""]):
        found = False
        for h, text in enumerate(texts):
            low = text.lower()
            if name and name.lower() not in low:
                continue
            if not rest or len(rest & content_words(text)) >= max(1, len(rest) // 2):
                found = True
                first_hit = h if i == 0 else first_hit
                break
        if not found:
            return "no", first_hit
    return "yes", first_hit


def extract(question: str, texts: Sequence[str], *, top: int = 5) -> Extract:
    """The best sentence of the first ``top`` texts (ranked hits) and the short answer taken from it."""
    wanted = content_words(question) or {"_"}
    scored: list[tuple[float, str, int]] = []
    for rank, text in enumerate(texts[:top]):
        weight = 1.0 / (1.0 + 0.5 * rank)
        for sentence in sentences_of(text) or [text]:
            overlap = len(wanted & content_words(sentence)) / len(wanted)
            scored.append((overlap * weight, sentence, rank))
    if not scored:
        return Extract("", "", 0, 0.0)
    scored.sort(key=lambda item: (-item[0], item[2]))
    _, top_sentence, top_hit = scored[0]
    support = round(len(wanted & content_words(top_sentence)) / len(wanted), 4)
    kind = _kind(question)
    if kind == "yesno":
        said, hit = _yes_no(question, texts[:top])
        return Extract(said, top_sentence, hit, support)
    if kind == "choice":
        picked = _choice(question, scored)
        if picked:
            return Extract(picked[0], top_sentence, picked[1], support)
        kind = "what"
    if kind == "sentence":
        return Extract(top_sentence, top_sentence, top_hit, support)
    best: tuple[float, str, str, int] | None = None
    for score, sentence, hit in scored[:8]:
        for span, position in _candidates(sentence, kind):
            if not _new(span, wanted) and kind not in ("when", "number", "frequency"):
                continue
            value = score * (0.5 + _proximity(sentence, position, wanted))
            if kind == "who":  # people are mostly named with two or more words
                value *= 1.0 + 0.2 * (min(len(span.split()), 3) - 1)
            if best is None or value > best[0]:
                best = (value, span, sentence, hit)
    if best is None:
        # A date, a count or a frequency asked and none in the evidence: it does not hold the answer (a name or
        # a thing may be worded in ways the span rules miss, so those fall back to the best sentence).
        said = "" if kind in ("when", "number", "frequency") else top_sentence
        return Extract(said, top_sentence, top_hit, support)
    _, span, sentence, hit = best
    return Extract(span, sentence, hit, round(len(wanted & content_words(sentence)) / len(wanted), 4))
