"""Algorithm 1 with a real model stays within its call budget: qwen2.5-coder-0.5b decomposes two two-hop
questions over the reasoning tests' documents (loaded and distilled offline here: the atoms are statements,
only the decomposition and the answer are the model's). Whatever the model proposes or selects, every
question spends at most ``max_calls`` calls, the answer included, and every step of the trace says what
it added and why."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from kg.llm import LLM, make_llm
from kg.settings import LLMSettings
from kg.store.base import GraphStore
from reasoning import ReasoningSettings, answer
from reasoning.decompose import STOP_REASONS
from tests.conftest import TestServer
from tests.real_llm.conftest import EMBEDDER, offline_kb

pytestmark = [pytest.mark.real_llm, pytest.mark.neo4j, pytest.mark.slow, pytest.mark.timeout(3600)]

QUESTIONS = [
    "Bob Edwards hosted what show that was later hosted by Renée Montagne?",
    "In what year was the first host of Morning Edition born?",
]


@pytest.fixture(scope="module")
def kb_store(session_store: GraphStore, neo4j_server: TestServer,
             tmp_path_factory: pytest.TempPathFactory) -> GraphStore:
    offline_kb(session_store, neo4j_server, tmp_path_factory.mktemp("decompose-budget"), layers=["atoms"])
    return session_store


@pytest.fixture(scope="module")
def model(real_llm_settings: LLMSettings) -> Iterator[LLM]:
    with make_llm(real_llm_settings, cache_dir=None) as llm:  # no cache: every call is counted as spent
        yield llm


def test_decompose_stays_within_its_call_budget_with_a_real_model(kb_store: GraphStore, model: LLM) -> None:
    # Statements share fewer words with a proposed question than atomic questions do: a lower delta.
    settings = ReasoningSettings(atom_threshold=0.2)
    outcomes: list[dict[str, object]] = []
    calls: list[int] = []
    for question in QUESTIONS:
        out = answer(question, store=kb_store, embedder=EMBEDDER, llm=model, method="decompose", settings=settings)
        trace = out.decomposition
        assert not out.offline and trace is not None and trace.steps
        assert out.usage.calls <= settings.max_calls, trace.render()
        assert out.usage.by_task.get("answer", 0) >= 1
        assert trace.stop_reason.split(";")[0] in STOP_REASONS, trace.stop_reason
        for step in trace.steps:
            if step.added_chunk_id is not None:
                assert step.selected is not None and step.reason
                chosen = step.candidates[step.selected]
                assert (chosen.chunk_id, chosen.atom_text) == (step.added_chunk_id, step.selected_atom)
        calls.append(out.usage.calls)
        outcomes.append({"question": question, "calls": out.usage.calls, "stop": trace.stop_reason,
                         "steps": len(trace.steps), "answer": out.answer,
                         "fallbacks": sum(s.reason.startswith("fallback") for s in trace.steps)})
        print("\n" + trace.render())
    print(json.dumps(outcomes, ensure_ascii=False, indent=1))
    assert sum(calls) / len(calls) <= settings.max_calls
