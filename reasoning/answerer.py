"""The answering strategy every reasoning method is given: with an LLM (:mod:`reasoning.llm_answerer`) or
without one, by extractive spans (:mod:`reasoning.extractive_answerer`).

A run's strategy is chosen once, when the run is made (:func:`reasoning.answerers.answerer_for` looks at
the LLM); the methods call it where the two modes differ and never ask which mode they are in.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from kg.llm import Task
from kg.retrieval.base import Hit
from reasoning.ports import Ports
from reasoning.settings import ReasoningSettings
from reasoning.types import Aggregation, Answer, TraceStep

__all__ = ["Answerer", "RunContext", "Trend"]

M = TypeVar("M", bound=BaseModel)


class RunContext(Protocol):
    """What a strategy needs of the run it answers for (:class:`reasoning.core.Run`)."""

    question: str
    ports: Ports
    settings: ReasoningSettings

    def note(self, step: TraceStep) -> None: ...

    def task(self, task: Task[M], /, **fields: Any) -> M: ...

    def checked(self, method: str, text: str, evidence: Sequence[Hit], listed: Sequence[int] = (), *,
                allowed: Collection[int] | None = None, asked: str | None = None, **extra: Any) -> Answer: ...

    def held(self, answer: Answer, asked: str | None = None) -> Answer: ...


@dataclass(frozen=True)
class Trend:
    """An L3 forecast to explain: the evidence, the yearly table and the fitted line in words, what the series
    measures (``per_year``), the markers of the evidence it came from, the slope and the prediction."""

    evidence: Sequence[Hit]
    table: str
    numbers: str
    per_year: str
    markers: str
    slope: float
    predicted: float
    year: int


class Answerer(Protocol):
    """How a run turns evidence into an answer, where that depends on having an LLM."""

    uses_llm: bool
    """Whether answers come from an LLM; an answer's ``offline`` field reports the opposite."""
    answers_closed_book: bool
    """Whether a closed-book method (:data:`~reasoning.citations.CLOSED_BOOK_METHODS`) is answered from the
    model's own knowledge, given no sources, and so left unheld (LLM); else it retrieves and is held (extractive)."""

    def cited(self, run: RunContext, method: str, evidence: Sequence[Hit], **extra: Any) -> Answer:
        """The answer to ``run.question`` from ``evidence``, citing it."""
        ...

    def stepwise(self, run: RunContext, method: str, loop: Callable[[], Answer],
                 evidence: Callable[[], Sequence[Hit]], **extra: Any) -> Answer:
        """A method that asks the LLM at every step (``loop``); without one, the answer from ``evidence()``
        with ``extra`` set on it."""
        ...

    def classify(self, run: RunContext) -> tuple[str, str, str]:
        """``(label, subtype, by)`` of ``run.question``; ``by`` is "llm" or "offline heuristic"."""
        ...

    def explain_forecast(self, run: RunContext, trend: Trend) -> tuple[str, str]:
        """``(explanation, source)`` of an L3 forecast; ``source`` is "llm" or "offline template"."""
        ...

    def creative(self, run: RunContext, evidence: Sequence[Hit]) -> Answer:
        """An L4 answer from perspectives on ``evidence`` (without an LLM: the evidence alone)."""
        ...

    def bridge(self, run: RunContext, rewritten: str, evidence: Sequence[Hit], first: str, inner: bool,
               aggregation: Aggregation) -> Answer:
        """The bridge of a bridging question: ``rewritten`` (its winner named) answered from ``evidence``,
        whose first hit is the ranking's table chunk when ``inner``; ``first`` states the ranking."""
        ...

    def require_llm(self, purpose: str) -> None:
        """Raise :class:`~kg.errors.ConfigError` when ``purpose`` cannot be served without an LLM."""
        ...
