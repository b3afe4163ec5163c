"""Typed results of the reasoning layer, shared by the CLI, the client, the REST API and the web page."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs typing_extensions' TypedDict before Python 3.12

from kg.llm.accounting import LLMReport
from kg.retrieval.base import ChunkLocation, Hit

__all__ = [
    "AggregateStep",
    "Aggregation",
    "Answer",
    "BridgeStep",
    "CandidateRecord",
    "ChainOfThoughtStep",
    "Citation",
    "CitationsDroppedStep",
    "CitationsGroundedStep",
    "DecomposeStep",
    "DecompositionStep",
    "DecompositionTrace",
    "Forecast",
    "LLMUsage",
    "OfflineExtractiveStep",
    "PerspectiveView",
    "PerspectivesStep",
    "RankStep",
    "RetrieveStep",
    "RouteStep",
    "SelfAskFinalStep",
    "SelfAskFollowUpStep",
    "StructureStep",
    "TableChoiceStep",
    "TraceStep",
]


class Citation(ChunkLocation):
    """Evidence ``[marker]`` as given to the answerer: where it is, down to the character span.

    ``claims`` are the sentences of the answer that cite this marker.
    """

    marker: int
    text: str
    claims: list[str] = Field(default_factory=list)


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


class _Step(BaseModel):
    """A step of a reasoning run, for display and JSON: ``{"index", "kind", "detail"}``; ``detail`` is a plain
    dict (typed per kind), so every surface shows it as it is."""

    index: int = 0
    """1-based position in the answer's trace (set by :meth:`reasoning.core.Run.note`); a ``decompose``
    step's is its iteration t of Algorithm 1."""


class OfflineExtractiveDetail(TypedDict):
    support: float
    sentence: str
    hit: int
    top_score: float | None


class OfflineExtractiveStep(_Step):
    """The offline answerer took its answer from the evidence sentence ``sentence`` of hit ``hit``."""

    kind: Literal["offline_extractive"] = "offline_extractive"
    detail: OfflineExtractiveDetail


class CitationsDroppedDetail(TypedDict):
    markers: list[int]
    evidence_given: int


class CitationsDroppedStep(_Step):
    """Markers of the LLM's answer that name no evidence it was given were removed."""

    kind: Literal["citations_dropped"] = "citations_dropped"
    detail: CitationsDroppedDetail


class CitationsGroundedDetail(TypedDict):
    markers: list[int]
    reason: str


class CitationsGroundedStep(_Step):
    """Markers added for the evidence that states what the cited chunks do not."""

    kind: Literal["citations_grounded"] = "citations_grounded"
    detail: CitationsGroundedDetail


class RetrieveDetail(TypedDict):
    query: str
    hits: list[tuple[str, float, str]]
    """``(chunk id, score, explanation)`` of each hit, best first."""


class RetrieveStep(_Step):
    kind: Literal["retrieve"] = "retrieve"
    detail: RetrieveDetail


class ChainOfThoughtDetail(TypedDict):
    reasoning: str


class ChainOfThoughtStep(_Step):
    kind: Literal["chain_of_thought"] = "chain_of_thought"
    detail: ChainOfThoughtDetail


class SelfAskFinalDetail(TypedDict):
    step: int


class SelfAskFinalStep(_Step):
    kind: Literal["self_ask_final"] = "self_ask_final"
    detail: SelfAskFinalDetail


class SelfAskFollowUpDetail(TypedDict):
    follow_up: str
    intermediate: str
    retrieved: NotRequired[list[str]]
    """The chunk ids retrieved for the follow-up (absent when the LLM answered it from its own knowledge)."""


class SelfAskFollowUpStep(_Step):
    kind: Literal["self_ask_follow_up"] = "self_ask_follow_up"
    detail: SelfAskFollowUpDetail


class CandidateDetail(TypedDict):
    proposal: str
    atom_id: str
    atom_text: str
    chunk_id: str
    title: str
    score: float


class DecomposeDetail(TypedDict):
    """A :class:`DecompositionStep` as data."""

    index: int
    proposals: list[str]
    sufficient: bool
    candidates: list[CandidateDetail]
    selected: int | None
    selected_atom: str | None
    reason: str
    added_chunk_id: str | None
    added_title: str | None


class DecomposeStep(_Step):
    """One iteration of Algorithm 1 (the answer's ``decomposition`` holds the whole run)."""

    kind: Literal["decompose"] = "decompose"
    detail: DecomposeDetail


class StructureDetail(TypedDict):
    kind: str
    series: list[tuple[int, float]]
    evidence_used: list[int]


class StructureStep(_Step):
    """L3's knowledge structuring: the yearly series and the evidence it came from."""

    kind: Literal["structure"] = "structure"
    detail: StructureDetail


class PerspectivesDetail(TypedDict):
    viewpoints: list[str]
    cited: list[int]


class PerspectivesStep(_Step):
    kind: Literal["perspectives"] = "perspectives"
    detail: PerspectivesDetail


class TableChoiceDetail(TypedDict):
    candidates: list[tuple[str, str, float]]
    """``(table id, value column, score)`` of every table that could answer."""
    chosen: str | None


class TableChoiceStep(_Step):
    kind: Literal["table_choice"] = "table_choice"
    detail: TableChoiceDetail


class RankDetail(TypedDict):
    table_id: str
    column: str
    descending: bool
    top: list[tuple[str, float]]


class RankStep(_Step):
    kind: Literal["rank"] = "rank"
    detail: RankDetail


class AggregateDetail(TypedDict):
    table_id: str
    column: str
    where: dict[str, str | float]
    aggregation: dict[str, Any] | None
    """The :class:`Aggregation` as data."""


class AggregateStep(_Step):
    kind: Literal["aggregate"] = "aggregate"
    detail: AggregateDetail


class BridgeDetail(TypedDict):
    inner: str
    winner: str
    value: float
    rewritten: str


class BridgeStep(_Step):
    kind: Literal["bridge"] = "bridge"
    detail: BridgeDetail


class RouteDetail(TypedDict):
    question_class: str
    subtype: str
    classified_by: str
    method: str


class RouteStep(_Step):
    kind: Literal["route"] = "route"
    detail: RouteDetail


TraceStep = Annotated[
    OfflineExtractiveStep | CitationsDroppedStep | CitationsGroundedStep | RetrieveStep | ChainOfThoughtStep
    | SelfAskFinalStep | SelfAskFollowUpStep | DecomposeStep | StructureStep | PerspectivesStep | TableChoiceStep
    | RankStep | AggregateStep | BridgeStep | RouteStep,
    Field(discriminator="kind"),
]
"""One step of a reasoning run, discriminated by ``kind``."""


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
    seed_chunk_ids: list[str] = Field(default_factory=list)
    """C0: the question's own retrieval (``ReasoningSettings.seed_k``), before any step."""
    steps: list[DecompositionStep] = Field(default_factory=list)
    stop_reason: str = ""
    context_chunk_ids: list[str] = Field(default_factory=list)
    usage: LLMUsage = Field(default_factory=LLMUsage)

    def render(self) -> str:
        """A plain-text view of the trace, one block per iteration."""
        lines = [f"question: {self.question}", f"N={self.max_steps} K={self.top_k} delta={self.threshold}"]
        if self.seed_chunk_ids:
            lines.append(f"C0 (the question's retrieval): {', '.join(self.seed_chunk_ids)}")
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
    llm: LLMReport | None = None
    """The LLM usage of this answer (the ``"llm"`` block every report carries)."""
    subtype: str | None = None
    dropped_markers: list[int] = Field(default_factory=list)
    unsupported_citations: int = 0
    """Citations dropped because the cited chunk does not support the sentence that carried them."""
    abstained: bool = False
    """True when the method found no supporting evidence and said so instead of answering."""
    decomposition: DecompositionTrace | None = None
    forecast: Forecast | None = None
    perspectives: list[PerspectiveView] = Field(default_factory=list)
    aggregation: Aggregation | None = None
    supporting_sentence: str | None = None
    """Offline extractive answers: the evidence sentence the short answer was taken from."""
    short_answer: str | None = None
    """LLM answers: the answer alone in a few words, as the model gave it beside its cited prose (None when it
    gave none, or when the answer abstained)."""
    usage: LLMUsage = Field(default_factory=LLMUsage)
