"""What every reasoning method shares: the run context, its answering strategy, LLM task calls, usage and
cited answers held to their sources (:mod:`reasoning.citations`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from kg.llm import LLM, LLMReport, Message, Task, detect_language, render
from kg.retrieval.base import Hit
from kg.store.base import GraphStore
from reasoning.answerer import Answerer
from reasoning.answerers import answerer_for
from reasoning.citations import CitationVerifier, hold_to_sources, verifier_for
from reasoning.evidence import check_citations, ground_citations
from reasoning.ports import Ports
from reasoning.settings import ReasoningSettings
from reasoning.types import (
    Answer,
    CitationsDroppedStep,
    CitationsGroundedStep,
    LLMUsage,
    TraceStep,
)

__all__ = ["Run", "usage_snapshot"]

M = TypeVar("M", bound=BaseModel)


def usage_snapshot(llm: LLM) -> LLMReport:
    """The LLM's accounting totals now (the job's ``"llm"`` report block)."""
    return llm.accounting.report()


def _calls_and_tokens(report: LLMReport) -> LLMUsage:
    return LLMUsage(calls=report.calls, prompt_tokens=report.prompt_tokens, completion_tokens=report.completion_tokens,
                    by_task={task: usage.calls for task, usage in report.by_task.items() if usage.calls})


@dataclass
class Run:
    """One question being answered: its collaborators, settings and the trace collected so far."""

    question: str
    store: GraphStore
    llm: LLM
    ports: Ports
    settings: ReasoningSettings
    trace: list[TraceStep] = field(default_factory=list)
    start: LLMReport = field(default_factory=LLMReport)
    strategy: InitVar[Answerer | None] = None
    """How answers are made (default: :func:`reasoning.answerers.answerer_for` the LLM), as :attr:`answerer`."""

    def __post_init__(self, strategy: Answerer | None) -> None:
        self.answerer: Answerer = strategy or answerer_for(self.llm)
        self.verifier: CitationVerifier = verifier_for(self.llm, self.settings)
        """Checks that each citation supports its sentence (:func:`reasoning.citations.verifier_for`)."""

    def note(self, step: TraceStep) -> None:
        """Append ``step`` to the trace, numbered after the steps before it."""
        self.trace.append(step.model_copy(update={"index": len(self.trace) + 1}))

    def messages(self, task: str, **fields: Any) -> tuple[list[Message], int]:
        """The chat messages of ``task`` (its prompt from ``kg/prompts``, in the question's language) and the
        prompt's version."""
        rendered = render(task, fields, lang=detect_language(self.question))
        return rendered.messages, rendered.version

    def task(self, task: Task[M], /, **fields: Any) -> M:
        """Complete an LLM task, in the question's language; the model is the task's
        (``LLMSettings.task_models``) or the default one."""
        return self.llm.run(task, lang=detect_language(self.question), **fields)

    def llm_report(self) -> LLMReport:
        """This run's LLM usage (the ``"llm"`` block of the answer's JSON)."""
        return usage_snapshot(self.llm).minus(self.start)

    def usage(self) -> LLMUsage:
        return _calls_and_tokens(self.llm_report())

    def finish(self, answer: Answer) -> Answer:
        """Attach the trace and the usage of this run to ``answer``."""
        report = self.llm_report()
        return answer.model_copy(update={
            "trace": [*self.trace, *answer.trace], "usage": _calls_and_tokens(report), "llm": report,
        })

    def cited(self, method: str, evidence: Sequence[Hit], **extra: Any) -> Answer:
        """The answer from ``evidence``, citing it (:meth:`reasoning.answerer.Answerer.cited`)."""
        return self.answerer.cited(self, method, evidence, **extra)

    def held(self, answer: Answer, asked: str | None = None) -> Answer:
        """``answer`` with the citations that do not support their sentences dropped and counted, abstaining
        when none is left (:func:`reasoning.citations.hold_to_sources`; ``asked``: the question its evidence
        answers, when not the run's)."""
        return hold_to_sources(answer, self.verifier, asked=asked, closed_book=self.answerer.answers_closed_book)

    def checked(self, method: str, text: str, evidence: Sequence[Hit], listed: Sequence[int] = (), *,
                allowed: Collection[int] | None = None, asked: str | None = None, short: str = "",
                **extra: Any) -> Answer:
        """An LLM answer whose markers are checked against the evidence it was given (only the numbers in
        ``allowed`` when the LLM saw only those), then held to its sources (:meth:`held`): a marker must
        support its sentence, and an answer citing nothing (the model saying the sources do not hold it)
        abstains. ``short``: the model's few-word answer, kept beside the prose."""
        cleaned, citations, dropped = check_citations(text, evidence, listed, allowed=allowed)
        if dropped:
            self.note(CitationsDroppedStep(detail={"markers": dropped, "evidence_given": len(evidence)}))
        added = ground_citations(cleaned, self.question, evidence, citations, allowed=allowed)
        if added:
            self.note(CitationsGroundedStep(detail={"markers": added,
                                                    "reason": "no cited chunk states the answer's terms"}))
            cleaned, citations, _ = check_citations(f"{cleaned} {''.join(f'[{n}]' for n in added)}", evidence,
                                                    [*listed, *added], allowed=allowed)
        return self.held(Answer(question=self.question, answer=cleaned, method=method, offline=False,
                                citations=citations, evidence=list(evidence), dropped_markers=dropped,
                                short_answer=short.strip() or None, **extra),
                         asked)
