"""Routing by question class (PIKE-RAG 3.2, Table 1).

The classifier (the run's answerer: LLM task ``question_class``; offline, the cue words of
:mod:`reasoning.questions`) labels a question factual, linkable (subtypes bridging, comparative, quantitative,
summarising), predictive or creative. Factual:
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

from reasoning.baselines import naive
from reasoning.core import Run
from reasoning.decompose import decompose
from reasoning.levels import bridge, creative, predictive, quantitative
from reasoning.questions import NESTED, SUBTYPES, heuristic_class
from reasoning.types import Answer, RouteStep

__all__ = ["SUBTYPES", "classify", "heuristic_class", "route"]


def classify(run: Run) -> tuple[str, str, str]:
    """``(label, subtype, by)`` where ``by`` is "llm" or "offline heuristic" (the run's answerer decides)."""
    return run.answerer.classify(run)


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
    run.note(RouteStep(detail={"question_class": label, "subtype": subtype, "classified_by": by, "method": chosen}))
    answer.question_class, answer.subtype = label, subtype or None
    answer.method = f"auto:{chosen}"
    return answer
