"""Test helpers shipped with Strata: a scripted OpenAI-compatible server."""

from __future__ import annotations

from kg.testing.scripted_llm import Fault, RecordedRequest, Reply, ScriptedLLMServer, truncated

__all__ = ["Fault", "RecordedRequest", "Reply", "ScriptedLLMServer", "truncated"]
