"""Routing by question class (PIKE-RAG 3.2, Table 1).

The classifier (LLM task ``question_class``; offline, the cue words below) labels a question factual,
linkable (subtypes bridging, comparative, quantitative, summarising), predictive or creative. Factual:
hybrid retrieval and a cited answer (L1). Linkable: Algorithm 1 (L2); quantitative questions get a
Cypher aggregation and bridging questions around a superlative ("the site that recorded the most ...") the
ranking and then the bridge, when the graph holds the records as Row nodes. Predictive: L3. Creative: L4.

>>> heuristic_class("How many biosimilars will be approved in 2026?")
('predictive', '')
>>> heuristic_class("Which is older, the Eiffel Tower or the Statue of Liberty?")
('linkable', 'comparative')
>>> heuristic_class("Which turbine model runs at the site that recorded the most gearbox failures in 2024?")
('linkable', 'bridging')
"""

from __future__ import annotations

import re

from kg.llm import QuestionClass
from reasoning.baselines import naive
from reasoning.core import Run
from reasoning.decompose import decompose
from reasoning.levels import NESTED, bridge, creative, predictive, quantitative, question_op
from reasoning.types import Answer

__all__ = ["SUBTYPES", "classify", "heuristic_class", "route"]

SUBTYPES: dict[str, tuple[str, ...]] = {
    "bridging": ("bridg", "multi-hop", "multihop"),
    "comparative": ("compar",),
    "quantitative": ("quantit", "aggregat", "count"),
    "summarising": ("summar",),
}
"""The linkable subtypes the classifier offers, with the stems an LLM's spelling of each starts with."""

_PREDICTIVE = re.compile(r"\b(predict\w*|forecast\w*|projection|expect(?:ed|s)?|anticipate\w*|next year|"
                         r"in the coming|trend|future|by 20\d\d|likely to)\b", re.I)
_FUTURE = re.compile(r"\b(?:will|shall|going to)\b")  # lower case only: "Will Smith" is not the future
_YEAR = re.compile(r"\b(1[5-9]\d{2}|20\d{2})\b")
_CREATIVE = re.compile(r"\b(suggest|propose|design|ideas?|how (?:could|can|should|might) (?:we|i|one)|"
                       r"strateg(?:y|ies)|improve|innovat\w*|recommend|what would you)\b", re.I)
_COMPARATIVE = re.compile(r"\b(both|older|younger|earlier|later|longer|shorter|more|less|larger|smaller|"
                          r"first|compare|same|differ\w*|which (?:one|is|was|came))\b.*\bor\b|\bboth\b", re.I)
_SUMMARISING = re.compile(r"\b(summari[sz]e|overview|main (?:themes|points)|in summary)\b", re.I)
_BRIDGING = re.compile(r"\b(that|who|whose|which|where|when)\b.+\b(of|by|in|the)\b", re.I)


def heuristic_class(question: str) -> tuple[str, str]:
    """Offline ``(label, subtype)`` from cue words; bridging needs a relative clause in a longer question."""
    if _PREDICTIVE.search(question) or _FUTURE.search(question):
        return "predictive", ""
    if _CREATIVE.search(question):
        return "creative", ""
    nested = NESTED.search(question)
    if nested and nested.start() > 0:
        return "linkable", "bridging"
    if question_op(question) is not None:
        return "linkable", "quantitative"
    if _COMPARATIVE.search(question):
        return "linkable", "comparative"
    if _SUMMARISING.search(question):
        return "linkable", "summarising"
    if len(question.split()) >= 10 and _BRIDGING.search(question.split(" ", 2)[-1]):
        return "linkable", "bridging"
    return "factual", ""


def classify(run: Run) -> tuple[str, str, str]:
    """``(label, subtype, by)`` where ``by`` is "llm" or "offline heuristic"."""
    if run.offline:
        label, subtype = heuristic_class(run.question)
        if label in ("factual", "linkable") and _beyond_the_record(run):
            return "predictive", "", "offline heuristic"
        return label, subtype, "offline heuristic"
    out = run.task("question_class", QuestionClass, question=run.question)
    if out.label != "linkable":
        return out.label, "", "llm"
    said = out.subtype.strip().lower()
    subtype = next((name for name, stems in SUBTYPES.items() if said.startswith(stems)), "")
    if not subtype and question_op(run.question):
        subtype = "quantitative"
    return out.label, subtype, "llm"


def _beyond_the_record(run: Run) -> bool:
    """Whether the question asks about a year later than every year its evidence mentions (a forecast)."""
    asked = [int(y) for y in _YEAR.findall(run.question)]
    if not asked:
        return False
    seen = [int(y) for h in run.ports.hybrid.retrieve(run.question, k=run.settings.hybrid_k)
            for y in _YEAR.findall(h.text)]
    return bool(seen) and min(asked) > max(seen)


def route(run: Run) -> Answer:
    """Classify, then answer with the method the class calls for."""
    label, subtype, by = classify(run)
    if label == "predictive":
        answer, chosen = predictive(run), "predictive"
    elif label == "creative":
        answer, chosen = creative(run), "creative"
    elif label == "linkable":
        found: tuple[Answer | None, str] = (None, "")
        if subtype == "quantitative":
            found = quantitative(run), "quantitative"
        elif subtype == "bridging" and NESTED.search(run.question):
            found = bridge(run), "bridge"
        answer, chosen = (found[0], found[1]) if found[0] else (decompose(run), "decompose")
    else:
        answer, chosen = naive(run, "hybrid", run.ports.hybrid, run.settings.hybrid_k), "hybrid"
    run.note("route", question_class=label, subtype=subtype, classified_by=by, method=chosen)
    answer.question_class, answer.subtype = label, subtype or None
    answer.method = f"auto:{chosen}"
    return answer
