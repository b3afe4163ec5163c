"""Typed LLM tasks: each :class:`Task` binds a task's name, its prompt file and its output schema and budget.

``llm.run(task, **fields)`` renders the task's prompt (``kg/prompts/<prompt>.<lang>.txt``) with ``fields``
and returns the task's output model, typed: ``llm.run(ATOMIC_QUESTIONS, title=t, chunk=c).questions`` needs
no ``isinstance`` at the caller. The task's name selects per-task model overrides
(``LLMSettings.task_models``), is the JSON-schema name sent to the endpoint, the key of the accounting
breakdown and what the scripted test server keys replies by.

>>> ATOMIC_QUESTIONS.schema is AtomicQuestions, ATOMIC_QUESTIONS.prompt, ATOMIC_QUESTIONS.output_tokens
(True, 'atomic_questions', 384)
>>> schema_for("atomic_questions") is AtomicQuestions
True
>>> task_for("answer", CitedAnswer) is ANSWER
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel

from kg.llm.schemas import (
    AtomicQuestions,
    AtomSelection,
    AtomsTriples,
    ChunkKnowledge,
    ChunkTags,
    CitedAnswer,
    EnhancedChunk,
    FactItems,
    ForecastExplanation,
    JudgeVerdict,
    KeyPoints,
    MindMap,
    Perspective,
    QuestionClass,
    QuestionProposals,
    Synthesis,
    TagAliases,
    TagClasses,
    Triples,
)

__all__ = [
    "ANSWER",
    "ATOMIC_QUESTIONS",
    "ATOMS_TRIPLES",
    "ATOM_SELECTION",
    "CHUNK_KNOWLEDGE",
    "CHUNK_TAGS",
    "DEFAULT_OUTPUT_TOKENS",
    "ENHANCED_CHUNK",
    "FACT_ITEMS",
    "FORECAST_EXPLANATION",
    "JUDGE",
    "KEY_POINTS",
    "MIND_MAP",
    "PERSPECTIVE",
    "QUESTION_CLASS",
    "QUESTION_PROPOSALS",
    "SYNTHESIS",
    "TAG_ALIASES",
    "TAG_CLASSES",
    "TASKS",
    "TASK_OUTPUT_TOKENS",
    "TASK_SCHEMAS",
    "TRIPLES",
    "ZERO_SHOT_COT",
    "Task",
    "output_budget",
    "schema_for",
    "task_for",
]

T = TypeVar("T", bound=BaseModel)

DEFAULT_OUTPUT_TOKENS = 512
"""The completion-token budget of a task that declares none."""


@dataclass(frozen=True)
class Task(Generic[T]):
    """One LLM task: ``name``, output ``schema``, completion-token budget ``output_tokens`` and the stem of its
    prompt files (``prompt``, the name by default).

    The budget is enough for a complete reply and small enough that a model that does not stop by itself is
    cut off in seconds, not minutes (a 2,048-token runaway takes 150 s on a local CPU model);
    ``LLMSettings.max_tokens`` caps it.
    """

    name: str
    schema: type[T]
    output_tokens: int = DEFAULT_OUTPUT_TOKENS
    prompt: str = field(default="")

    def __post_init__(self) -> None:
        if not self.prompt:
            object.__setattr__(self, "prompt", self.name)

    def __repr__(self) -> str:
        return f"Task({self.name!r}, {self.schema.__name__})"


ATOMIC_QUESTIONS = Task("atomic_questions", AtomicQuestions, 384)
"""PIKE-RAG knowledge atomizing: the questions a chunk answers (fields ``title``, ``chunk``)."""
TRIPLES = Task("triples", Triples, 640)
"""KG2RAG: typed triples of a chunk (field ``chunk``)."""
ATOMS_TRIPLES = Task("atoms_triples", AtomsTriples, 1024)
"""Atoms and triples of a chunk in one call (fields ``title``, ``chunk``): the two tasks' budgets together."""
CHUNK_KNOWLEDGE = Task("chunk_knowledge", ChunkKnowledge, 1280)
"""Atoms, triples and tags of a chunk in one call (fields ``title``, ``chunk``, ``tag_classes``): the three
tasks' budgets together."""
QUESTION_PROPOSALS = Task("question_proposals", QuestionProposals, 256)
"""PIKE-RAG: follow-up atomic questions (fields ``question``, ``context``, ``max_proposals``)."""
ATOM_SELECTION = Task("atom_selection", AtomSelection, 128)
"""PIKE-RAG Algorithm 1: the most useful candidate atom."""
ANSWER = Task("answer", CitedAnswer, 512)
"""A cited answer from numbered evidence (fields ``question``, ``context``)."""
QUESTION_CLASS = Task("question_class", QuestionClass, 64)
"""The question's class (field ``question``)."""
TAG_CLASSES = Task("tag_classes", TagClasses, 384)
"""Tag classes for a corpus (fields ``domain``, ``samples``)."""
CHUNK_TAGS = Task("chunk_tags", ChunkTags, 256)
"""Tags of one chunk by class (fields ``tag_classes``, ``chunk``)."""
TAG_ALIASES = Task("tag_aliases", TagAliases, 384)
"""Colloquial aliases of tags (field ``tags``)."""
KEY_POINTS = Task("key_points", KeyPoints, 256)
"""PG-RAG: the key points an answer must cover (field ``question``)."""
FACT_ITEMS = Task("fact_items", FactItems, 640)
"""PG-RAG fact-check items of a chunk (fields ``title``, ``text``)."""
MIND_MAP = Task("mind_map", MindMap, 768)
"""PG-RAG mind map over a document's facts (fields ``title``, ``facts``)."""
FORECAST_EXPLANATION = Task("forecast_explanation", ForecastExplanation, 384)
"""A predictive answer with drivers and confidence."""
PERSPECTIVE = Task("perspective", Perspective, 384)
"""One perspective on a creative question."""
SYNTHESIS = Task("synthesis", Synthesis, 512)
"""A synthesis of several perspectives."""
JUDGE = Task("judge", JudgeVerdict, 160)
"""An LLM judge's verdict (fields ``question``, ``reference``, ``answer``)."""
ENHANCED_CHUNK = Task("enhanced_chunk", EnhancedChunk, 320)
"""PIKE-RAG recurrent split of a window of numbered sentences (fields ``summary``, ``text``)."""
ZERO_SHOT_COT = Task("zero_shot_cot", CitedAnswer)
"""The zero-shot chain-of-thought baseline (field ``question``)."""

TASKS: dict[str, Task[Any]] = {
    t.name: t
    for t in (
        ATOMIC_QUESTIONS, TRIPLES, ATOMS_TRIPLES, CHUNK_KNOWLEDGE, QUESTION_PROPOSALS, ATOM_SELECTION, ANSWER,
        QUESTION_CLASS, TAG_CLASSES,
        CHUNK_TAGS, TAG_ALIASES, KEY_POINTS, FACT_ITEMS, MIND_MAP, FORECAST_EXPLANATION, PERSPECTIVE, SYNTHESIS,
        JUDGE, ENHANCED_CHUNK, ZERO_SHOT_COT,
    )
}
"""Every task Strata declares, by name."""

TASK_SCHEMAS: dict[str, type[BaseModel]] = {name: t.schema for name, t in TASKS.items()}
"""The output schema of each declared task, by name."""
TASK_OUTPUT_TOKENS: dict[str, int] = {name: t.output_tokens for name, t in TASKS.items()}
"""The completion-token budget of each declared task, by name."""


def output_budget(task: str, cap: int | None = None, *, own: int | None = None) -> int:
    """The completion-token budget of ``task`` (``own`` when given, else the declared task's, else 512), at
    most ``cap`` when given.

    >>> output_budget("question_class"), output_budget("answer", cap=100), output_budget("x", own=70)
    (64, 100, 70)
    """
    budget = own if own is not None else TASK_OUTPUT_TOKENS.get(task, DEFAULT_OUTPUT_TOKENS)
    return min(budget, cap) if cap is not None else budget


def schema_for(task: str) -> type[BaseModel]:
    """The output schema declared for ``task`` (KeyError for an unknown task)."""
    return TASKS[task].schema


def task_for(name: str, schema: type[T]) -> Task[T]:
    """The declared task ``name`` when its output is ``schema``, else a new task of that name and schema
    with the default budget (a task declared outside :mod:`kg.llm`, e.g. one of :mod:`reasoning`'s)."""
    known = TASKS.get(name)
    if known is not None and known.schema is schema:
        return cast(Task[T], known)
    return Task(name, schema)
