"""Strata's model layer: any OpenAI-compatible chat endpoint, with structured outputs, retries, a persistent
cache, accounting and a token budget; an explicit offline marker when no endpoint is configured.

Example::

    from kg.llm import make_llm, load_prompt, AtomicQuestions
    llm = make_llm(settings.llm, cache_dir=settings.cache_dir)
    if llm.offline:
        ...  # skip LLM-built layers
    else:
        prompt = prompt_for("atomic_questions", chunk_text)
        out = llm.complete_structured("atomic_questions", prompt.messages(chunk=chunk_text, title=title),
                                      AtomicQuestions, prompt_version=prompt.version)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kg.llm.accounting import Accounting, LLMReport, UsageCounts
from kg.llm.base import LLM, Message, OfflineLLM
from kg.llm.local import resolve_local
from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.llm.prompts import Prompt, available_prompts, load_prompt, prompt_for
from kg.llm.schemas import (
    TASK_SCHEMAS,
    AtomicQuestions,
    AtomSelection,
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
    schema_for,
)
from kg.llm.structured import extract_json
from kg.settings import LLMSettings
from kg.shared.response_cache import ResponseCache, cache_key
from kg.shared.retrying import RetryPolicy, parse_retry_after
from kg.shared.text import detect_language, estimate_messages_tokens, estimate_tokens

__all__ = [
    "LLM",
    "TASK_SCHEMAS",
    "Accounting",
    "AtomSelection",
    "AtomicQuestions",
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
    "ResponseCache",
    "RetryPolicy",
    "Synthesis",
    "TagAliases",
    "TagClass",
    "TagClasses",
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
    "schema_for",
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
