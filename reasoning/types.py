"""Typed results of the reasoning layer, shared by the CLI, the client, the REST API and the web page."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from kg.retrieval.base import ChunkLocation, Hit

__all__ = [
    "Aggregation",
    "Answer",
    "CandidateRecord",
    "Citation",
    "DecompositionStep",
    "DecompositionTrace",
    "Forecast",
    "LLMUsage",
    "PerspectiveView",
    "TraceStep",
]


class Citation(ChunkLocation):
    """Evidence ``[marker]`` as given to the answerer: where it is, down to the character span.

    ``claims`` are the sentences of the answer that cite this marker.
    """

    marker: int
    text: str
    claims: list[str] = Field(default_factory=list)


class TraceStep(BaseModel):
    """One step of a reasoning loop (e.g. one iteration of Algorithm 1), for display and JSON."""

    index: int
    kind: str
    detail: dict[str, Any] = Field(default_factory=dict)


class CandidateRecord(BaseModel):
    """An atom candidate retrieved for one proposal in Algorithm 1 (line 4), with its cosine score."""

    proposal: str
    atom_id: str
    atom_text: str
    chunk_id: str
    title: str
    score: float


class DecompositionStep(BaseModel):
    """One iteration t of Algorithm 1: proposals, candidates, the LLM's selection and the chunk added."""

    index: int
    proposals: list[str] = Field(default_factory=list)
    sufficient: bool = False
    candidates: list[CandidateRecord] = Field(default_factory=list)
    selected: int | None = None
    selected_atom: str | None = None
    reason: str = ""
    added_chunk_id: str | None = None
    added_title: str | None = None


class LLMUsage(BaseModel):
    """LLM calls and tokens one answer cost (from the job's accounting)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    by_task: dict[str, int] = Field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class DecompositionTrace(BaseModel):
    """The whole run of Algorithm 1, printable with :meth:`render` and saved as JSON with the answer."""

    question: str
    max_steps: int
    top_k: int
    threshold: float
    steps: list[DecompositionStep] = Field(default_factory=list)
    stop_reason: str = ""
    context_chunk_ids: list[str] = Field(default_factory=list)
    usage: LLMUsage = Field(default_factory=LLMUsage)

    def render(self) -> str:
        """A plain-text view of the trace, one block per iteration."""
        lines = [f"question: {self.question}", f"N={self.max_steps} K={self.top_k} delta={self.threshold}"]
        for step in self.steps:
            lines.append(f"step {step.index}: {len(step.proposals)} proposal(s)" +
                         (" [context judged sufficient]" if step.sufficient else ""))
            lines.extend(f"  ? {p}" for p in step.proposals)
            for i, cand in enumerate(step.candidates):
                mark = "*" if step.selected == i else " "
                lines.append(f"  {mark}[{i}] {cand.score:.3f} {cand.atom_text!r} -> {cand.title} ({cand.chunk_id})")
            if step.added_chunk_id:
                lines.append(f"  + added {step.added_chunk_id} ({step.added_title}): {step.reason}")
            elif step.reason:
                lines.append(f"  - none selected: {step.reason}")
        lines.append(f"stop: {self.stop_reason}; context: {len(self.context_chunk_ids)} chunk(s); "
                     f"LLM calls {self.usage.calls}, tokens {self.usage.tokens}")
        return "\n".join(lines)


class Forecast(BaseModel):
    """An L3 answer's transparent forecast: the yearly series, the least-squares line and the prediction."""

    series: list[tuple[int, float]]
    measure: str
    """What the series holds: a table column's values, values found in the evidence, or the number of
    evidence sentences dated each year (a proxy, named as such in the answer)."""
    slope: float
    intercept: float
    target_year: int
    predicted: float
    explanation: str
    explanation_source: str  # "llm" or "offline template"


class PerspectiveView(BaseModel):
    """One L4 perspective agent's argument (its markers refer to the shared evidence)."""

    viewpoint: str
    argument: str
    citations: list[int] = Field(default_factory=list)


class Aggregation(BaseModel):
    """A quantitative answer computed in Cypher over a table's Row nodes."""

    table_id: str
    column: str
    op: str
    value: float | None
    rows: int
    where: str | None = None
    label: str | None = None
    """For a ranking (``argmax``/``argmin``, or a total asked together with "which ... the most"): the
    winning row's label."""
    label_column: str | None = None


class Answer(BaseModel):
    question: str
    answer: str
    method: str
    question_class: str | None = None
    offline: bool
    citations: list[Citation] = Field(default_factory=list)
    evidence: list[Hit] = Field(default_factory=list)
    trace: list[TraceStep] = Field(default_factory=list)
    stop_reason: str | None = None
    llm: dict[str, Any] | None = None
    subtype: str | None = None
    dropped_markers: list[int] = Field(default_factory=list)
    decomposition: DecompositionTrace | None = None
    forecast: Forecast | None = None
    perspectives: list[PerspectiveView] = Field(default_factory=list)
    aggregation: Aggregation | None = None
    supporting_sentence: str | None = None
    """Offline extractive answers: the evidence sentence the short answer was taken from."""
    usage: LLMUsage = Field(default_factory=LLMUsage)
