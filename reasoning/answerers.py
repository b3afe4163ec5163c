"""The choice of answering strategy, made once per run from the LLM it is given."""

from __future__ import annotations

from kg.llm import LLM, OfflineLLM
from reasoning.answerer import Answerer
from reasoning.extractive_answerer import OfflineAnswerer
from reasoning.llm_answerer import LLMAnswerer

__all__ = ["answerer_for"]


def answerer_for(llm: LLM) -> Answerer:
    """:class:`OfflineAnswerer` for the offline marker (no endpoint configured), else :class:`LLMAnswerer`."""
    return OfflineAnswerer() if isinstance(llm, OfflineLLM) else LLMAnswerer()
