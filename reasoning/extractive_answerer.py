"""The offline answerer: without an LLM, answers are spans extracted from the evidence (marked
``offline=True``, the source sentence kept as ``supporting_sentence``), questions are classified by cue words
and forecasts are explained by a template named as such. Methods that need an LLM at every step answer
from one retrieval instead; a creative answer is only the evidence found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from kg.errors import ConfigError
from kg.retrieval.base import Hit
from reasoning.answerer import RunContext, Trend
from reasoning.evidence import check_citations
from reasoning.extract import extract
from reasoning.questions import heuristic_class
from reasoning.types import Aggregation, Answer, OfflineExtractiveStep

__all__ = ["OfflineAnswerer", "extractive"]

_YEAR = re.compile(r"\b(1[5-9]\d{2}|20\d{2})\b")


def extractive(run: RunContext, method: str, evidence: Sequence[Hit], **extra: Any) -> Answer:
    """The short span (or best sentence) across the top evidence, cited with the hit it came from;
    ``offline=True`` and the source sentence kept as ``supporting_sentence``. Held to its sources like an
    LLM's answer: a span its hit does not support, or no evidence at all, abstains."""
    pick = extract(run.question, [h.text for h in evidence])
    text = f"{pick.span} [{pick.hit + 1}]" if evidence and pick.span else ""  # nothing found: it abstains
    _, citations, _ = check_citations(text, evidence)
    run.note(OfflineExtractiveStep(detail={"support": pick.support, "sentence": pick.sentence, "hit": pick.hit + 1,
                                           "top_score": evidence[0].score if evidence else None}))
    return run.held(Answer(question=run.question, answer=text, method=method, offline=True, citations=citations,
                           evidence=list(evidence), supporting_sentence=pick.sentence or None, **extra))


def _beyond_the_record(run: RunContext) -> bool:
    """Whether the question asks about a year later than every year its evidence mentions (a forecast)."""
    asked = [int(y) for y in _YEAR.findall(run.question)]
    if not asked:
        return False
    seen = [int(y) for h in run.ports.hybrid.retrieve(run.question, k=run.settings.hybrid_k)
            for y in _YEAR.findall(h.text)]
    return bool(seen) and min(asked) > max(seen)


class OfflineAnswerer:
    """:class:`reasoning.answerer.Answerer` without an LLM: extractive answers."""

    uses_llm = False
    answers_closed_book = False

    def cited(self, run: RunContext, method: str, evidence: Sequence[Hit], **extra: Any) -> Answer:
        return extractive(run, method, evidence, **extra)

    def stepwise(self, run: RunContext, method: str, loop: Callable[[], Answer],
                 evidence: Callable[[], Sequence[Hit]], **extra: Any) -> Answer:
        return extractive(run, method, evidence(), **extra)

    def classify(self, run: RunContext) -> tuple[str, str, str]:
        label, subtype = heuristic_class(run.question)
        if label in ("factual", "linkable") and _beyond_the_record(run):
            return "predictive", "", "offline heuristic"
        return label, subtype, "offline heuristic"

    def explain_forecast(self, run: RunContext, trend: Trend) -> tuple[str, str]:
        explanation = (f"offline template explanation: the {trend.per_year} extracted from the evidence "
                       f"{trend.markers} change by {trend.slope:+.3f} per year on average; continuing that line "
                       f"gives {trend.predicted:.2f} for {trend.year}. This assumes the past trend continues.")
        return explanation, "offline template"

    def creative(self, run: RunContext, evidence: Sequence[Hit]) -> Answer:
        """No answer, and it says why: creative answers need an LLM; the evidence found is kept."""
        return Answer(question=run.question, method="creative", offline=True, evidence=list(evidence),
                      abstained=True, answer="offline: creative answers need an LLM (set STRATA_LLM_BASE_URL); "
                                             "the evidence found is listed below.")

    def bridge(self, run: RunContext, rewritten: str, evidence: Sequence[Hit], first: str, inner: bool,
               aggregation: Aggregation) -> Answer:
        pick = extract(rewritten, [h.text for h in evidence[1:]] if inner else [h.text for h in evidence])
        n = pick.hit + (2 if inner else 1)
        text = f"{pick.span} [{n}]: {first}{' [1]' if inner else ''}; from the evidence for " \
               f"\"{rewritten}\": {pick.sentence} [{n}]"
        _, citations, _ = check_citations(text, evidence)
        return run.held(Answer(question=run.question, answer=text, method="bridge", offline=True,
                               citations=citations, evidence=list(evidence), aggregation=aggregation,
                               supporting_sentence=pick.sentence or None), rewritten)

    def require_llm(self, purpose: str) -> None:
        raise ConfigError(f"{purpose} needs an LLM: set STRATA_LLM_BASE_URL")
