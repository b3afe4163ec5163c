"""Numbered evidence for the answerer and cited answers checked in code (offline answers: :mod:`reasoning.extract`).

The evidence list given to the LLM is the only thing a citation may point at: :func:`check_citations`
keeps the ``[n]`` markers with ``1 <= n <= len(evidence)``, removes the others from the answer text and
reports them, and builds each :class:`Citation` from the very hit that was numbered ``n`` in the prompt.

>>> from kg.retrieval.base import Hit
>>> ev = [Hit(chunk_id="c1", text="Paris is in France.", document_id="d", title="Paris", char_start=0,
...           char_end=19, score=1.0)]
>>> text, cites, dropped = check_citations("Paris is in France [1][3].", ev)
>>> text, [c.marker for c in cites], dropped
('Paris is in France [1].', [1], [3])
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kg.retrieval.base import Hit
from loaders import split_sentences
from reasoning.types import Citation

__all__ = ["MARKER", "check_citations", "render_evidence", "strip_markers"]

MARKER = re.compile(r"\[(\d+)\]")


def render_evidence(evidence: Sequence[Hit], *, start: int = 1) -> str:
    """``[n] title (page p): text`` blocks, numbered from ``start``; "(none)" for no evidence."""
    if not evidence:
        return "(none)"
    blocks = []
    for n, hit in enumerate(evidence, start):
        where = f", page {hit.page}" if hit.page is not None else ""
        blocks.append(f"[{n}] {hit.title}{where}:\n{hit.text}")
    return "\n\n".join(blocks)


def strip_markers(text: str) -> str:
    """The answer without ``[n]`` markers (for scoring against gold answers)."""
    return re.sub(r"\s+([.,;:!?])", r"\1", MARKER.sub("", text)).strip()


def _sentences(text: str) -> list[str]:
    return [text[a:b].strip() for a, b in split_sentences(text) if text[a:b].strip()]


def check_citations(answer: str, evidence: Sequence[Hit], listed: Sequence[int] = ()
                    ) -> tuple[str, list[Citation], list[int]]:
    """Validate ``[n]`` markers against the evidence given; returns (text, citations, dropped markers).

    A citation's ``claims`` are the answer's sentences that carry its marker. Markers listed by the LLM
    but absent from the text still cite (with no claim) when valid.
    """
    valid = range(1, len(evidence) + 1)
    dropped = sorted({int(m) for m in MARKER.findall(answer) if int(m) not in valid} |
                     {int(m) for m in listed if int(m) not in valid})
    cleaned = MARKER.sub(lambda m: m.group(0) if int(m.group(1)) in valid else "", answer)
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
    return cleaned, citations, dropped
