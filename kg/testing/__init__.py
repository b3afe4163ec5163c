"""Test helpers shipped with Strata: a scripted OpenAI-compatible server and a fault-injecting transport for
the OpenAI client."""

from __future__ import annotations

from kg.testing.failing_llm import FailingTransport, TransportFault
from kg.testing.failing_store import FailingStore
from kg.testing.scripted_llm import Fault, RecordedRequest, Reply, ScriptedLLMServer, truncated

__all__ = [
    "FailingStore",
    "FailingTransport",
    "Fault",
    "RecordedRequest",
    "Reply",
    "ScriptedLLMServer",
    "TransportFault",
    "truncated",
]
