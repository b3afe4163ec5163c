"""Strata's model layer: any OpenAI-compatible chat endpoint, with structured outputs, retries, a persistent
cache, accounting and a token budget; an explicit offline marker when no endpoint is configured.

Example::

    from kg.llm import ATOMIC_QUESTIONS, make_llm
    llm = make_llm(settings.llm, cache_dir=settings.cache_dir)
    if llm.offline:
        ...  # pick the offline strategy once
    else:
        out = llm.run(ATOMIC_QUESTIONS, title=title, chunk=chunk_text)  # an AtomicQuestions
        print(out.questions)

A :class:`~kg.llm.tasks.Task` binds a task's name, its prompt files (``kg/prompts/<name>.<lang>.txt``) and its
output schema and budget; ``llm.run(task, **fields)`` returns the schema's instance, typed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kg.llm.accounting import Accounting, LLMReport, UsageCounts
from kg.llm.base import LLM, Message, OfflineLLM
from kg.llm.local import resolve_local
from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.llm.prompts import Prompt, Rendered, available_prompts, load_prompt, prompt_for, render
from kg.llm.schemas import (
    AtomicQuestions,
    AtomSelection,
    AtomsTriples,
    ChunkKnowledge,
    ChunkTags,
    CitedAnswer,
    EnhancedChunk,
    FactItem,
    FactItems,
    ForecastExplanation,
    JudgeVerdict,
    KeyPoints,
    MindMap,
    MindMapNode,
    Perspective,
    QuestionClass,
    QuestionProposals,
    Synthesis,
    TagAliases,
    TagClass,
    TagClasses,
    Triple,
    Triples,
)
from kg.llm.structured import extract_json
from kg.llm.tasks import (
    ANSWER,
    ATOM_SELECTION,
    ATOMIC_QUESTIONS,
    ATOMS_TRIPLES,
    CHUNK_KNOWLEDGE,
    CHUNK_TAGS,
    ENHANCED_CHUNK,
    FACT_ITEMS,
    FORECAST_EXPLANATION,
    JUDGE,
    KEY_POINTS,
    MIND_MAP,
    PERSPECTIVE,
    QUESTION_CLASS,
    QUESTION_PROPOSALS,
    SYNTHESIS,
    TAG_ALIASES,
    TAG_CLASSES,
    TASK_SCHEMAS,
    TASKS,
    TRIPLES,
    ZERO_SHOT_COT,
    Task,
    schema_for,
    task_for,
)
from kg.settings import LLMSettings
from kg.shared.response_cache import ResponseCache, cache_key
from kg.shared.retrying import RetryPolicy, parse_retry_after
from kg.shared.text import detect_language, estimate_messages_tokens, estimate_tokens

__all__ = [
    "ANSWER",
    "ATOMIC_QUESTIONS",
    "ATOMS_TRIPLES",
    "ATOM_SELECTION",
    "CHUNK_KNOWLEDGE",
    "CHUNK_TAGS",
    "ENHANCED_CHUNK",
    "FACT_ITEMS",
    "FORECAST_EXPLANATION",
    "JUDGE",
    "KEY_POINTS",
    "LLM",
    "MIND_MAP",
    "PERSPECTIVE",
    "QUESTION_CLASS",
    "QUESTION_PROPOSALS",
    "SYNTHESIS",
    "TAG_ALIASES",
    "TAG_CLASSES",
    "TASKS",
    "TASK_SCHEMAS",
    "TRIPLES",
    "ZERO_SHOT_COT",
    "Accounting",
    "AtomSelection",
    "AtomicQuestions",
    "AtomsTriples",
    "ChunkKnowledge",
    "ChunkTags",
    "CitedAnswer",
    "EnhancedChunk",
    "FactItem",
    "FactItems",
    "ForecastExplanation",
    "JudgeVerdict",
    "KeyPoints",
    "LLMReport",
    "Message",
    "MindMap",
    "MindMapNode",
    "OfflineLLM",
    "OpenAICompatibleLLM",
    "Perspective",
    "Prompt",
    "QuestionClass",
    "QuestionProposals",
    "Rendered",
    "ResponseCache",
    "RetryPolicy",
    "Synthesis",
    "TagAliases",
    "TagClass",
    "TagClasses",
    "Task",
    "Triple",
    "Triples",
    "UsageCounts",
    "available_prompts",
    "cache_key",
    "detect_language",
    "estimate_messages_tokens",
    "estimate_tokens",
    "extract_json",
    "load_prompt",
    "make_llm",
    "parse_retry_after",
    "prompt_for",
    "render",
    "schema_for",
    "task_for",
]


def make_llm(
    settings: LLMSettings,
    *,
    cache_dir: Path | None = None,
    accounting: Accounting | None = None,
    budget_tokens: int | None = None,
    progress: Callable[[str], None] | None = None,
    **client_options: Any,
) -> LLM:
    """The configured LLM, or an :class:`OfflineLLM` (``llm.offline is True``) when ``base_url`` is None.

    ``base_url="local"`` starts the local model server when it is not running (``progress`` hears about the
    model's assembly and the start). ``client_options`` go to :class:`OpenAICompatibleLLM`
    (``base_backoff_s``, ``max_backoff_s``).
    """
    if settings.offline:
        return OfflineLLM(accounting)
    return OpenAICompatibleLLM(
        resolve_local(settings, progress), cache_dir=cache_dir, accounting=accounting, budget_tokens=budget_tokens,
        **client_options,
    )
