"""What every reasoning method shares: the run context, LLM task calls, usage and cited answers."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from kg.llm import LLM, CitedAnswer, LLMReport, Message, detect_language, render, task_for
from kg.retrieval.base import Hit
from kg.store.base import GraphStore
from reasoning.evidence import check_citations, ground_citations, render_evidence
from reasoning.extract import extract
from reasoning.ports import Ports
from reasoning.settings import ReasoningSettings
from reasoning.types import Answer, LLMUsage, TraceStep

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

    @property
    def offline(self) -> bool:
        return self.llm.offline

    def note(self, step: str, /, **detail: Any) -> None:
        """Append a trace step of kind ``step``."""
        self.trace.append(TraceStep(index=len(self.trace) + 1, kind=step, detail=detail))

    def messages(self, task: str, **fields: Any) -> tuple[list[Message], int]:
        """The chat messages of ``task`` (its prompt from ``kg/prompts``, in the question's language) and the
        prompt's version."""
        rendered = render(task, fields, lang=detect_language(self.question))
        return rendered.messages, rendered.version

    def task(self, task: str, schema: type[M], **fields: Any) -> M:
        """Complete an LLM task; the model is the task's (``LLMSettings.task_models``) or the default one."""
        return self.llm.run(task_for(task, schema), lang=detect_language(self.question), **fields)

    def llm_report(self) -> LLMReport:
        """This run's LLM usage (the ``"llm"`` block of the answer's JSON)."""
        return usage_snapshot(self.llm).minus(self.start)

    def usage(self) -> LLMUsage:
        return _calls_and_tokens(self.llm_report())

    def finish(self, answer: Answer) -> Answer:
        """Attach the trace and the usage of this run to ``answer``."""
        report = self.llm_report()
        return answer.model_copy(update={
            "trace": [*self.trace, *answer.trace], "usage": _calls_and_tokens(report), "llm": report.to_json(),
        })

    def extractive(self, method: str, evidence: Sequence[Hit], **extra: Any) -> Answer:
        """The offline answer: the short span (or best sentence) across the top evidence, cited with the
        hit it came from; ``offline=True`` and the source sentence kept as ``supporting_sentence``."""
        pick = extract(self.question, [h.text for h in evidence])
        text = f"{pick.span} [{pick.hit + 1}]" if evidence and pick.span else ""
        if not text:
            text = "offline extractive answer: no evidence was found"
        _, citations, _ = check_citations(text, evidence)
        self.note("offline_extractive", support=pick.support, sentence=pick.sentence, hit=pick.hit + 1,
                  top_score=evidence[0].score if evidence else None)
        return Answer(question=self.question, answer=text, method=method, offline=True, citations=citations,
                      evidence=list(evidence), supporting_sentence=pick.sentence or None, **extra)

    def cited(self, method: str, evidence: Sequence[Hit], **extra: Any) -> Answer:
        """Answer from ``evidence`` (task ``answer``), keeping only citations of the evidence given."""
        if self.offline:
            return self.extractive(method, evidence, **extra)
        out = self.task("answer", CitedAnswer, question=self.question, context=render_evidence(evidence))
        return self.checked(method, out.answer, evidence, out.citations, **extra)

    def checked(self, method: str, text: str, evidence: Sequence[Hit], listed: Sequence[int] = (), *,
                allowed: Collection[int] | None = None, **extra: Any) -> Answer:
        """An LLM answer whose markers are checked against the evidence it was given (only the numbers in
        ``allowed`` when the LLM saw only those)."""
        cleaned, citations, dropped = check_citations(text, evidence, listed, allowed=allowed)
        if dropped:
            self.note("citations_dropped", markers=dropped, evidence_given=len(evidence))
        added = ground_citations(cleaned, self.question, evidence, citations, allowed=allowed)
        if added:
            self.note("citations_grounded", markers=added, reason="no cited chunk states the answer's terms")
            cleaned, citations, _ = check_citations(f"{cleaned} {''.join(f'[{n}]' for n in added)}", evidence,
                                                    [*listed, *added], allowed=allowed)
        return Answer(question=self.question, answer=cleaned, method=method, offline=False, citations=citations,
                      evidence=list(evidence), dropped_markers=dropped, **extra)
