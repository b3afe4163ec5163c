"""Numbered evidence for the answerer and cited answers checked in code (offline answers: :mod:`reasoning.extract`).

The evidence list given to the LLM is the only thing a citation may point at: :func:`check_citations`
reads markers as LLMs write them (``[1]``, ``[1, 7]``, ``[2-4]``, ``[1][2]``, full-width ``【1】``),
keeps the numbers ``n`` with ``1 <= n <= len(evidence)`` (or in a narrower ``allowed`` set), rewrites each
marker as ``[n]`` per kept number, removes the others from the answer text and reports them, and builds
each :class:`Citation` from the very hit that was numbered ``n`` in the prompt.

>>> from kg.retrieval.base import Hit
>>> ev = [Hit(chunk_id=f"c{i}", text="Paris is in France.", document_id="d", title="Paris", char_start=0,
...           char_end=19, score=1.0) for i in (1, 2)]
>>> text, cites, dropped = check_citations("Paris is in France [1, 3]【2】.", ev)
>>> text, [c.marker for c in cites], dropped
('Paris is in France [1][2].', [1, 2], [3])
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from kg.retrieval.base import Hit
from loaders import split_sentences
from reasoning.types import Citation

__all__ = [
    "MARKER", "MARKER_GROUP", "check_citations", "ground_citations", "marker_numbers", "render_evidence",
    "strip_markers",
]

MARKER = re.compile(r"\[(\d+)\]")
"""A normalised marker: one evidence number in ASCII brackets."""
_SEP = r"[-\u2013\u2014~\uff5e,\uff0c\u3001;\uff1b]"  # range and list separators, ASCII and full-width
MARKER_GROUP = re.compile(rf"[\[\u3010\uff3b]\s*(\d+(?:\s*{_SEP}\s*\d+)*)\s*[\]\u3011\uff3d]")
"""A marker as written: one number, a list or a range, in ASCII, full-width or lenticular (【】) brackets."""
_LIST = re.compile(r"\s*[,\uff0c\u3001;\uff1b]\s*")  # ASCII and full-width commas and semicolons, 、
_RANGE = re.compile(r"\s*[-\u2013\u2014~\uff5e]\s*")  # hyphen, en and em dashes, tildes
_LONGEST_RANGE = 20  # a longer span is no citation list: its two ends are read (and reported), not all between


def marker_numbers(body: str) -> list[int]:
    """The evidence numbers inside one marker's brackets, in order, lists and ranges expanded.

    >>> marker_numbers("1, 7"), marker_numbers("2-4"), marker_numbers("3; 1, 3")
    ([1, 7], [2, 3, 4], [3, 1])
    """
    numbers: list[int] = []
    for part in _LIST.split(body.strip()):
        ends = [int(x) for x in _RANGE.split(part)]
        if len(ends) == 2 and 0 < ends[1] - ends[0] <= _LONGEST_RANGE:
            numbers.extend(range(ends[0], ends[1] + 1))
        else:
            numbers.extend(ends)
    return list(dict.fromkeys(numbers))


def render_evidence(evidence: Sequence[Hit], *, start: int = 1, only: Collection[int] | None = None) -> str:
    """``[n] title (page p): text`` blocks, numbered from ``start`` (only the numbers in ``only``, when
    given); "(none)" for no evidence."""
    blocks = []
    for n, hit in enumerate(evidence, start):
        if only is not None and n not in only:
            continue
        where = f", page {hit.page}" if hit.page is not None else ""
        blocks.append(f"[{n}] {hit.title}{where}:\n{hit.text}")
    return "\n\n".join(blocks) or "(none)"


def strip_markers(text: str) -> str:
    """The answer without citation markers (for scoring against gold answers)."""
    return re.sub(r"\s+([.,;:!?])", r"\1", MARKER_GROUP.sub("", text)).strip()


def _sentences(text: str) -> list[str]:
    return [text[a:b].strip() for a, b in split_sentences(text) if text[a:b].strip()]


def check_citations(answer: str, evidence: Sequence[Hit], listed: Sequence[int] = (), *,
                    allowed: Collection[int] | None = None) -> tuple[str, list[Citation], list[int]]:
    """Validate the answer's markers against the evidence given; returns (text, citations, dropped numbers).

    ``allowed`` narrows the numbers that may be cited (default: every evidence number). A citation's
    ``claims`` are the answer's sentences that carry its marker. Numbers listed by the LLM but absent from
    the text still cite (with no claim) when valid.
    """
    valid = {n for n in (allowed if allowed is not None else range(1, len(evidence) + 1))
             if 1 <= n <= len(evidence)}
    dropped = {int(m) for m in listed if int(m) not in valid}

    def normalise(match: re.Match[str]) -> str:
        numbers = marker_numbers(match.group(1))
        dropped.update(n for n in numbers if n not in valid)
        return "".join(f"[{n}]" for n in numbers if n in valid)

    cleaned = re.sub(r"[ \t]{2,}", " ", MARKER_GROUP.sub(normalise, answer))
    cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned).strip()
    claims: dict[int, list[str]] = {}
    for sentence in _sentences(cleaned) or [cleaned]:
        for m in dict.fromkeys(int(x) for x in MARKER.findall(sentence)):
            claims.setdefault(m, []).append(strip_markers(sentence))
    used = list(dict.fromkeys([*claims, *(int(m) for m in listed if int(m) in valid)]))
    citations = []
    for marker in sorted(used):
        hit = evidence[marker - 1]
        citations.append(Citation(**hit.location(), marker=marker, text=hit.text, claims=claims.get(marker, [])))
    return cleaned, citations, sorted(dropped)


_TERM = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]{4,}|[\u4e00-\u9fff]{2,}")


def _terms(text: str) -> set[str]:
    """Numbers (thousands separators dropped) and content words of ``text``, casefolded."""
    out = set()
    for token in _TERM.findall(text.casefold()):
        out.add(re.sub(r"(?<=\d),(?=\d{3}\b)", "", token) if token[0].isdigit() else token)
    return out


def ground_citations(answer: str, question: str, evidence: Sequence[Hit], citations: Sequence[Citation],
                     *, allowed: Collection[int] | None = None) -> list[int]:
    """Evidence numbers to cite in addition, when no cited chunk states what the answer says.

    The answer's own terms (numbers and content words not in the question) are looked for in the cited
    chunks; of those no cited chunk states, the uncited chunk that states the most is a source the model
    forgot to cite (small models cite the wrong number, or only one of two). Returns [] when the answer cites
    nothing, when the cited chunks state all it says, or when no other chunk states a number or two words of
    the rest.

    >>> from kg.retrieval.base import Hit
    >>> ev = [Hit(chunk_id=c, text=t, document_id="d", title="T", char_start=0, char_end=len(t), score=1.0)
    ...       for c, t in (("a", "Turbines are inspected twice a year."), ("b", "The repair cost EUR 84,000."))]
    >>> cited = check_citations("It cost 84000 [1].", ev)[1]
    >>> ground_citations("It cost 84000 [1].", "How much did the repair cost?", ev, cited)
    [2]
    """
    claimed = _terms(strip_markers(answer)) - _terms(question)
    # An answer that cites nothing says the sources do not hold it: that is never second-guessed.
    if not claimed or not citations:
        return []
    # What the answer says that no cited chunk states.
    uncovered = claimed - set().union(*(_terms(c.text) for c in citations))
    if not uncovered:
        return []
    cited = {c.marker for c in citations}
    numbers = [n for n in (allowed if allowed is not None else range(1, len(evidence) + 1))
               if 1 <= n <= len(evidence) and n not in cited]

    def support(n: int) -> tuple[int, int]:
        found = uncovered & _terms(evidence[n - 1].text)
        return sum(t[0].isdigit() for t in found), len(found)

    scored = {n: support(n) for n in numbers}
    # One shared number, or two shared words: a single common word is no evidence of the source.
    best = max((s for s in scored.values() if s[0] or s[1] >= 2), default=None)
    return [min(n for n, s in scored.items() if s == best)] if best else []
