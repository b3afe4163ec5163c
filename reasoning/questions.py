"""What a question's words say about it, without an LLM: the aggregation it asks for, a superlative inside a
relative clause, and its class by cue words (the offline classifier of :mod:`reasoning.router`).

>>> heuristic_class("How many biosimilars will be approved in 2026?")
('predictive', '')
>>> heuristic_class("Which is older, the Eiffel Tower or the Statue of Liberty?")
('linkable', 'comparative')
>>> heuristic_class("Which turbine model runs at the site that recorded the most gearbox failures in 2024?")
('linkable', 'bridging')
>>> linkable_subtype("multi-hop", "Who hosted the show?")
'bridging'
"""

from __future__ import annotations

import re

__all__ = ["NESTED", "OPS", "SUBTYPES", "heuristic_class", "linkable_subtype", "question_op"]

OPS: dict[str, tuple[str, ...]] = {
    "avg": ("average", "mean"),
    "sum": ("total", "sum", "altogether", "combined"),
    "max": ("maximum", "highest", "largest", "most", "greatest"),
    "min": ("minimum", "lowest", "smallest", "least", "fewest"),
    "count": ("how many", "number of", "count"),
}
"""The aggregations a quantitative question may ask for, with the cue words of each."""

NESTED = re.compile(r"\b(?:the|a|an)\s+(?P<noun>[\w-]+)\s+(?:that|which|who|where|whose|with)\s+"
                    r"(?P<inner>[^?]*?\b(?:most|least|highest|lowest|largest|smallest|fewest|greatest|maximum|"
                    r"minimum)\b[^?]*)", re.I)
"""A superlative inside a relative clause ("... the site that recorded the most failures"): a bridging
question answered by the ranking first, then the bridge from its winner."""

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
_CREATIVE = re.compile(r"\b(suggest|propose|design|ideas?|how (?:could|can|should|might) (?:we|i|one)|"
                       r"strateg(?:y|ies)|improve|innovat\w*|recommend|what would you)\b", re.I)
_COMPARATIVE = re.compile(r"\b(both|older|younger|earlier|later|longer|shorter|more|less|larger|smaller|"
                          r"first|compare|same|differ\w*|which (?:one|is|was|came))\b.*\bor\b|\bboth\b", re.I)
_SUMMARISING = re.compile(r"\b(summari[sz]e|overview|main (?:themes|points)|in summary)\b", re.I)
_BRIDGING = re.compile(r"\b(that|who|whose|which|where|when)\b.+\b(of|by|in|the)\b", re.I)


def question_op(question: str) -> str | None:
    """The aggregation a quantitative question asks for (``count``, ``sum``, ``avg``, ``max``, ``min``)."""
    lowered = question.lower()
    for op, cues in OPS.items():
        if any(re.search(rf"\b{re.escape(cue)}\b", lowered) for cue in cues):
            return op
    return None


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


def linkable_subtype(said: str, question: str) -> str:
    """The :data:`SUBTYPES` name an LLM's subtype spells (``""`` for none), or ``quantitative`` when the
    LLM named none and the question asks for an aggregation."""
    lowered = said.strip().lower()
    subtype = next((name for name, stems in SUBTYPES.items() if lowered.startswith(stems)), "")
    if not subtype and question_op(question):
        subtype = "quantitative"
    return subtype
