"""The LLM answerer: cited answers (task ``answer``) checked against the evidence given, question classes
(task ``question_class``), forecast explanations (task ``forecast_explanation``), and L4's perspective agents
(task ``perspective``) with their synthesis (task ``synthesis``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kg.llm import ANSWER, FORECAST_EXPLANATION, PERSPECTIVE, QUESTION_CLASS, SYNTHESIS, Perspective
from kg.retrieval.base import Hit
from reasoning.answerer import RunContext, Trend
from reasoning.evidence import check_citations, render_evidence
from reasoning.questions import linkable_subtype
from reasoning.types import Aggregation, Answer, PerspectivesStep, PerspectiveView

__all__ = ["LLMAnswerer"]


class LLMAnswerer:
    """:class:`reasoning.answerer.Answerer` with an LLM: every answer is the LLM's, its citations checked."""

    uses_llm = True
    answers_closed_book = True

    def cited(self, run: RunContext, method: str, evidence: Sequence[Hit], **extra: Any) -> Answer:
        """Answer from ``evidence`` (task ``answer``), keeping only citations of the evidence given."""
        out = run.task(ANSWER, question=run.question, context=render_evidence(evidence))
        return run.checked(method, out.answer, evidence, out.citations, short=out.short, **extra)

    def stepwise(self, run: RunContext, method: str, loop: Callable[[], Answer],
                 evidence: Callable[[], Sequence[Hit]], **extra: Any) -> Answer:
        return loop()

    def classify(self, run: RunContext) -> tuple[str, str, str]:
        out = run.task(QUESTION_CLASS, question=run.question)
        if out.label != "linkable":
            return out.label, "", "llm"
        return out.label, linkable_subtype(out.subtype, run.question), "llm"

    def explain_forecast(self, run: RunContext, trend: Trend) -> tuple[str, str]:
        out = run.task(FORECAST_EXPLANATION, question=run.question,
                       context=f"{render_evidence(trend.evidence)}\n\nYearly table:\n{trend.table}\n\n"
                               f"Trend: {trend.numbers}")
        return f"{out.forecast} " + " ".join(out.drivers), "llm"

    def creative(self, run: RunContext, evidence: Sequence[Hit]) -> Answer:
        """Perspective agents in parallel, each citing the shared evidence; then a synthesis given the
        perspectives and the evidence they cite, which may cite only that evidence (checked here)."""
        context = render_evidence(evidence)

        def agent(viewpoint: str) -> Perspective:
            return run.task(PERSPECTIVE, question=run.question, viewpoint=viewpoint, context=context)

        with ThreadPoolExecutor(max_workers=len(run.settings.perspectives)) as pool:
            outs = list(pool.map(agent, run.settings.perspectives))
        views = []
        for viewpoint, out in zip(run.settings.perspectives, outs, strict=True):
            argument, cites, _ = check_citations(out.argument, evidence, out.citations)
            views.append(PerspectiveView(viewpoint=out.viewpoint or viewpoint, argument=argument,
                                         citations=[c.marker for c in cites]))
        cited = sorted({n for v in views for n in v.citations})
        rendered = "\n\n".join(
            f"Perspective {i} ({v.viewpoint}; cites {''.join(f'[{n}]' for n in v.citations) or 'nothing'}): "
            f"{v.argument}" for i, v in enumerate(views, 1))
        synthesis = run.task(SYNTHESIS, question=run.question, perspectives=rendered,
                             evidence=render_evidence(evidence, only=cited))
        run.note(PerspectivesStep(detail={"viewpoints": [v.viewpoint for v in views], "cited": cited}))
        answer = run.checked("creative", synthesis.answer, evidence, synthesis.citations, allowed=cited)
        answer.perspectives = views
        return answer

    def bridge(self, run: RunContext, rewritten: str, evidence: Sequence[Hit], first: str, inner: bool,
               aggregation: Aggregation) -> Answer:
        context = render_evidence(evidence)
        out = run.task(ANSWER, question=run.question,
                       context=f"{first} [1].\n\n{context}" if inner else context)
        answer = run.checked("bridge", out.answer, evidence, out.citations, asked=rewritten, short=out.short)
        answer.aggregation = aggregation
        return answer

    def require_llm(self, purpose: str) -> None:
        return None
