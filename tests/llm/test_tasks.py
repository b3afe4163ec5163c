"""Typed tasks: ``llm.run(task, **fields)`` renders the task's prompt and returns its output model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from kg.errors import ConfigError
from kg.llm import (
    ANSWER,
    ATOMIC_QUESTIONS,
    ATOMS_TRIPLES,
    CHUNK_KNOWLEDGE,
    QUESTION_CLASS,
    TASKS,
    ZERO_SHOT_COT,
    AtomicQuestions,
    CitedAnswer,
    OfflineLLM,
    OpenAICompatibleLLM,
    Task,
    available_prompts,
    load_prompt,
    render,
    schema_for,
    task_for,
)
from kg.llm.schemas import AtomsTriples, ChunkKnowledge
from kg.settings import LLMSettings
from kg.testing import FailingTransport


def _llm(transport: FailingTransport, tmp_path: Path | None = None, **settings: Any) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(LLMSettings(base_url=FailingTransport.BASE_URL, model="m", **settings),
                               cache_dir=tmp_path, transport=transport, base_backoff_s=0.001)


def test_run_renders_the_prompt_in_the_fields_language_and_returns_the_typed_model() -> None:
    transport = FailingTransport({"questions": ["Neo4j 是什么?"]})
    with _llm(transport) as llm:
        out = llm.run(ATOMIC_QUESTIONS, title="Neo4j", chunk="Neo4j 是一个图数据库。")
    assert type(out) is AtomicQuestions and out.questions == ["Neo4j 是什么?"]
    (sent,) = transport.requests
    expected = render("atomic_questions", {"title": "Neo4j", "chunk": "Neo4j 是一个图数据库。"})
    assert expected.lang == "zh"
    assert [m["content"] for m in sent["messages"]] == [m["content"] for m in expected.messages]
    assert sent["response_format"]["json_schema"]["name"] == "atomic_questions"


def test_run_takes_lang_temperature_and_the_tasks_budget_capped_by_the_setting(tmp_path: Path) -> None:
    transport = FailingTransport({"label": "factual"})
    with _llm(transport, max_tokens=50) as llm:
        assert llm.run(QUESTION_CLASS, lang="en", temperature=0.4, question="Wer ist Ada?").label == "factual"
    with _llm(transport) as llm:
        llm.run(QUESTION_CLASS, question="Who is Ada?")
    first, second = transport.requests
    assert (first["max_tokens"], first["temperature"]) == (50, 0.4)
    assert second["max_tokens"] == QUESTION_CLASS.output_tokens == 64


def test_samples_are_distinct_cache_entries_and_a_rerun_replays_them(tmp_path: Path) -> None:
    transport = FailingTransport({"questions": ["q"]})
    with _llm(transport, tmp_path) as llm:
        llm.run(ATOMIC_QUESTIONS, title="t", chunk="c", sample=1)
        llm.run(ATOMIC_QUESTIONS, title="t", chunk="c", sample=2)
    with _llm(transport, tmp_path) as again:
        again.run(ATOMIC_QUESTIONS, title="t", chunk="c", sample=2)
        assert again.accounting.to_json()["by_task"]["atomic_questions"]["cache_hits"] == 1
    assert transport.calls == 2


def test_every_declared_task_has_its_prompt_in_the_one_folder() -> None:
    found = available_prompts()
    for name, task in TASKS.items():
        assert task.prompt in found, name
        assert load_prompt(task.prompt, "en").version >= 1
    # reasoning's prompts live there too
    assert {"self_ask", "zero_shot_cot"} <= set(found)


def test_task_for_reuses_a_declared_task_and_makes_others() -> None:
    assert task_for("answer", CitedAnswer) is ANSWER
    assert task_for("zero_shot_cot", CitedAnswer) is ZERO_SHOT_COT
    made = task_for("self_ask", AtomicQuestions)
    assert made == Task("self_ask", AtomicQuestions) and made.prompt == "self_ask" and made.output_tokens == 512


def test_offline_llm_run_names_the_setting() -> None:
    with pytest.raises(ConfigError, match="STRATA_LLM_BASE_URL"):
        OfflineLLM().run(ATOMIC_QUESTIONS, title="x", chunk="y")


@pytest.mark.parametrize("reply", [{}, {"questions": ["Who?"]}, {"triples": []}, {"error": "no reply scripted"}])
def test_a_shared_reply_missing_a_key_is_malformed_not_empty(reply: dict[str, Any]) -> None:
    for schema in (AtomsTriples, ChunkKnowledge):
        with pytest.raises(ValidationError):
            schema.model_validate(reply)
    assert AtomsTriples.model_validate({"questions": [], "triples": []}).questions == []


def test_chunk_knowledge_requires_its_tags_too() -> None:
    with pytest.raises(ValidationError):
        ChunkKnowledge.model_validate({"questions": ["Who?"], "triples": []})
    full = ChunkKnowledge.model_validate({"questions": [], "triples": [], "tags": {"site": ["North Ridge"]}})
    assert full.tags == {"site": ["North Ridge"]}
    assert schema_for("chunk_knowledge") is ChunkKnowledge and schema_for("atoms_triples") is AtomsTriples
    assert CHUNK_KNOWLEDGE.output_tokens > ATOMS_TRIPLES.output_tokens  # room for the tags
