"""The answering strategy is chosen once from the LLM; trace steps are a discriminated union with the same
JSON as before; retrieval settings are one typed model per method. None of these need Neo4j."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import TypeAdapter

from kg.errors import ConfigError, RetrievalError
from kg.llm import OfflineLLM, make_llm
from kg.llm.accounting import LLMReport
from kg.retrieval import METHODS, method_settings
from kg.retrieval.settings import SETTINGS, HybridSettings, KG2RAGSettings
from kg.settings import LLMSettings
from reasoning.answerers import answerer_for
from reasoning.extractive_answerer import OfflineAnswerer
from reasoning.llm_answerer import LLMAnswerer
from reasoning.types import Answer, RetrieveStep, SelfAskFollowUpStep, TableChoiceStep, TraceStep


def test_the_answerer_is_chosen_from_the_llm(tmp_path: Path) -> None:
    offline = answerer_for(OfflineLLM())
    assert isinstance(offline, OfflineAnswerer) and not offline.uses_llm
    with pytest.raises(ConfigError, match="needs an LLM"):
        offline.require_llm("collecting decomposer training data")
    with make_llm(LLMSettings(base_url="http://127.0.0.1:9", model="m"), cache_dir=tmp_path) as llm:
        online = answerer_for(llm)
    assert isinstance(online, LLMAnswerer) and online.uses_llm
    online.require_llm("anything")


def test_trace_steps_keep_their_json_and_parse_back_by_kind() -> None:
    steps = TypeAdapter(list[TraceStep])
    data = [
        {"index": 1, "kind": "retrieve", "detail": {"query": "q", "hits": [["c1", 0.5, "chunk 0.500"]]}},
        {"index": 2, "kind": "self_ask_follow_up", "detail": {"follow_up": "f", "intermediate": "i"}},
        {"index": 3, "kind": "self_ask_follow_up", "detail": {"follow_up": "f", "intermediate": "i",
                                                               "retrieved": ["c2"]}},
        {"index": 4, "kind": "table_choice", "detail": {"candidates": [["t", "col", 3.5]], "chosen": None}},
    ]
    parsed = steps.validate_python(data)
    assert [type(s) for s in parsed] == [RetrieveStep, SelfAskFollowUpStep, SelfAskFollowUpStep,
                                         TableChoiceStep]
    assert steps.dump_python(parsed, mode="json") == data  # an absent key stays absent
    with pytest.raises(ValueError, match="kind"):
        steps.validate_python([{"index": 1, "kind": "nope", "detail": {}}])


def test_answer_llm_is_the_typed_report_with_the_same_json() -> None:
    report = LLMReport(model="m", calls=2, prompt_tokens=10)
    answer = Answer(question="q", answer="a", method="naive-r", offline=False, llm=report)
    assert answer.model_dump(mode="json")["llm"] == report.to_json()
    assert Answer.model_validate_json(answer.model_dump_json()).llm == report


def test_retriever_settings_are_typed_per_method() -> None:
    assert set(SETTINGS) == set(METHODS)  # every method has its settings model, and nothing else does
    assert method_settings("kg2rag", seeds=1) == KG2RAGSettings(seeds=1)
    assert method_settings("hybrid", HybridSettings(fusion="linear"), rrf_k=3) == HybridSettings(
        fusion="linear", rrf_k=3)
    with pytest.raises(RetrievalError, match="sedes"):
        method_settings("kg2rag", sedes=1)
    with pytest.raises(RetrievalError, match="takes KG2RAGSettings"):
        method_settings("kg2rag", HybridSettings())
    with pytest.raises(RetrievalError, match="unknown retrieval method"):
        method_settings("nope")
