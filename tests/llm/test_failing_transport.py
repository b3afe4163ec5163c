"""Retries, repairs and typed errors of the OpenAI client, through the fault-injecting transport of kg.testing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kg.errors import LLMError, LLMOutputError, LLMTruncatedError, LLMUnavailableError
from kg.llm import ATOMIC_QUESTIONS, AtomicQuestions, OpenAICompatibleLLM
from kg.settings import LLMSettings
from kg.testing import FailingTransport, TransportFault

GOOD = {"questions": ["What is Neo4j?"]}
FIELDS = {"title": "Neo4j", "chunk": "Neo4j is a graph database."}

Make = Callable[..., OpenAICompatibleLLM]


@pytest.fixture
def make() -> Iterator[Make]:
    made: list[OpenAICompatibleLLM] = []

    def build(transport: FailingTransport, **settings: Any) -> OpenAICompatibleLLM:
        options: dict[str, Any] = {"base_url": FailingTransport.BASE_URL, "model": "m", "max_retries": 3,
                                   "response_format": "json_schema", **settings}
        llm = OpenAICompatibleLLM(LLMSettings(**options), transport=transport, base_backoff_s=0.001,
                                  max_backoff_s=0.005)
        made.append(llm)
        return llm

    yield build
    for llm in made:
        llm.close()


def test_timeouts_and_5xx_are_retried_then_the_reply_is_typed(make: Make) -> None:
    transport = FailingTransport(GOOD, faults={1: TransportFault.timeout(), 2: TransportFault.server_error(503),
                                               3: TransportFault.disconnect()})
    llm = make(transport)
    out = llm.run(ATOMIC_QUESTIONS, **FIELDS)
    assert isinstance(out, AtomicQuestions) and out.questions == GOOD["questions"]
    assert transport.calls == 4
    assert llm.accounting.to_json()["by_task"]["atomic_questions"]["calls"] == 1  # one logical call
    # Each attempt is the same request, with the task's own output budget.
    assert all(r == transport.requests[0] for r in transport.requests)
    assert transport.requests[0]["max_tokens"] == ATOMIC_QUESTIONS.output_tokens


def test_an_endpoint_that_stays_down_is_unavailable_after_the_retries(make: Make) -> None:
    transport = FailingTransport(GOOD, always=TransportFault.server_error(502))
    with pytest.raises(LLMUnavailableError, match="failed after 3 attempt"):
        make(transport, max_retries=2).run(ATOMIC_QUESTIONS, **FIELDS)
    assert transport.calls == 3


def test_a_rate_limit_on_the_nth_call_only(make: Make) -> None:
    transport = FailingTransport(GOOD, faults={2: TransportFault.rate_limit(retry_after=0)})
    llm = make(transport, cache=False)
    assert llm.run(ATOMIC_QUESTIONS, **FIELDS).questions == GOOD["questions"]
    assert llm.run(ATOMIC_QUESTIONS, title="Neo4j", chunk="Cypher is its query language.").questions
    assert transport.calls == 3


def test_a_malformed_reply_is_repaired_once_then_fails_typed(make: Make) -> None:
    transport = FailingTransport(GOOD, faults={1: TransportFault.malformed_reply()})
    llm = make(transport)
    assert llm.run(ATOMIC_QUESTIONS, **FIELDS).questions == GOOD["questions"]
    assert transport.calls == 2
    repair = transport.requests[1]["messages"]
    assert repair[-2]["role"] == "assistant" and "could not be used" in repair[-1]["content"]
    assert llm.accounting.to_json()["by_task"]["atomic_questions"]["repaired"] == 1

    broken = FailingTransport(GOOD, always=TransportFault.malformed_reply())
    with pytest.raises(LLMOutputError, match="invalid output after one repair"):
        make(broken).run(ATOMIC_QUESTIONS, **FIELDS)
    assert broken.calls == 2


def test_a_truncated_reply_is_asked_shorter_then_raises_for_the_caller_to_split(make: Make) -> None:
    transport = FailingTransport(GOOD, faults={1: TransportFault.truncated()})
    llm = make(transport)
    assert llm.run(ATOMIC_QUESTIONS, **FIELDS).questions == GOOD["questions"]
    assert "cut off at the length limit" in transport.requests[1]["messages"][-1]["content"]

    cut = FailingTransport(GOOD, always=TransportFault.truncated())
    with pytest.raises(LLMTruncatedError):
        make(cut).run(ATOMIC_QUESTIONS, **FIELDS)
    assert cut.calls == 2


def test_a_malformed_http_body_is_a_typed_llm_error_not_retried(make: Make) -> None:
    transport = FailingTransport(GOOD, faults={1: TransportFault.malformed_body()})
    with pytest.raises(LLMError, match="not a JSON chat completion"):
        make(transport).run(ATOMIC_QUESTIONS, **FIELDS)
    assert transport.calls == 1


def test_timeouts_are_not_sent_again_when_the_server_serves_one_request_at_a_time(make: Make) -> None:
    transport = FailingTransport(GOOD, faults={1: TransportFault.timeout()})
    with pytest.raises(LLMUnavailableError, match="timed out"):
        make(transport, retry_timeouts=False).run(ATOMIC_QUESTIONS, **FIELDS)
    assert transport.calls == 1
