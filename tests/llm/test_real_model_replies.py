"""What real OpenAI-compatible servers and small models do, replayed by the scripted server: refused
response formats, prose around JSON, invalid list items, runaway replies, slow single-request servers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kg.errors import LLMError, LLMOutputError, LLMUnavailableError
from kg.llm import AtomicQuestions, Triples
from kg.llm.negotiation import ResponseFormats
from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.llm.structured import parse_reply
from kg.testing.scripted_llm import Fault, ScriptedLLMServer, format_of

Client = Callable[..., OpenAICompatibleLLM]
MESSAGES = [{"role": "system", "content": "You atomize."}, {"role": "user", "content": "Neo4j is a graph database."}]
GOOD = {"questions": ["What is Neo4j?"]}


@pytest.fixture
def llama_cpp_python() -> ScriptedLLMServer:
    """An endpoint that refuses json_schema with HTTP 500, as llama-cpp-python's server does."""
    with ScriptedLLMServer(accepted_formats=frozenset({"json_object_schema", "json_object", "text"})) as srv:
        yield srv


def client_for(server: ScriptedLLMServer, cache_dir: Path | None = None, **fields: object) -> OpenAICompatibleLLM:
    from kg.settings import LLMSettings

    settings = LLMSettings(base_url=server.base_url, model="small", timeout_s=5.0, max_retries=3,
                           **fields)  # type: ignore[arg-type]
    return OpenAICompatibleLLM(settings, cache_dir=cache_dir, base_backoff_s=0.01, max_backoff_s=0.05)


def test_a_refused_form_moves_to_the_next_at_once_and_is_remembered(
    llama_cpp_python: ScriptedLLMServer, tmp_path: Path
) -> None:
    llama_cpp_python.script("atomic_questions", GOOD)
    with client_for(llama_cpp_python, tmp_path) as llm:
        assert llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions).questions == ["What is Neo4j?"]
        assert llm.accounting.to_json()["response_format"] == "json_object_schema"
    forms = [format_of(r.body) for r in llama_cpp_python.chat_requests()]
    assert forms == ["json_schema", "json_object_schema"]  # one refusal, no retries of it
    sent = llama_cpp_python.chat_requests()[1].body
    assert sent["response_format"]["schema"] == AtomicQuestions.model_json_schema()
    assert '{"questions": ["..."]}' in sent["messages"][0]["content"]  # the shape, for models that ignore schemas
    assert ResponseFormats(tmp_path / "llm").known(llama_cpp_python.base_url, "small") == "json_object_schema"
    # A new client (a new run) starts at the form found.
    llama_cpp_python.requests.clear()
    with client_for(llama_cpp_python, tmp_path, cache=False) as again:
        again.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert [format_of(r.body) for r in llama_cpp_python.chat_requests()] == ["json_object_schema"]


def test_the_ladder_ends_in_plain_text_with_the_shape_in_the_prompt(tmp_path: Path) -> None:
    with ScriptedLLMServer(accepted_formats=frozenset({"text"})) as server:
        server.script("atomic_questions", f"Here you go:\n```json\n{json.dumps(GOOD)}\n```")
        with client_for(server) as llm:
            assert llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions).questions
        assert [format_of(r.body) for r in server.chat_requests()] == [
            "json_schema", "json_object_schema", "json_object", "text"]


def test_a_forced_form_that_is_refused_names_the_fix(llama_cpp_python: ScriptedLLMServer) -> None:
    llama_cpp_python.script("atomic_questions", GOOD)
    with client_for(llama_cpp_python, response_format="json_schema") as llm, \
            pytest.raises(LLMError, match="STRATA_LLM_RESPONSE_FORMAT=auto"):
        llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert len(llama_cpp_python.chat_requests()) == 1


def test_invalid_list_items_are_dropped_and_counted_not_the_reply(server: ScriptedLLMServer, make_client: Client
                                                                 ) -> None:
    server.script("triples", {"triples": [
        {"head": "Acme", "relation": "founded_by", "tail": "Jane Roe"},
        {"head": "Acme", "relation": "located_in"},  # no tail
        "Acme -> Oslo",
    ]})
    llm = make_client()
    out = llm.complete_structured("triples", MESSAGES, Triples)
    assert [(t.head, t.tail) for t in out.triples] == [("Acme", "Jane Roe")]
    counts = llm.accounting.to_json()["by_task"]["triples"]
    assert (counts["invalid_items"], counts["repaired"], counts["calls"]) == (2, 0, 1)


def test_a_bare_list_is_read_for_a_schema_with_one_list() -> None:
    parsed = parse_reply('Sure! ["What is Neo4j?", "Who makes Neo4j?"]', AtomicQuestions)
    assert parsed.value is not None and parsed.value.questions == ["What is Neo4j?", "Who makes Neo4j?"]
    assert parse_reply("no json at all", AtomicQuestions).error == "no JSON object found in the reply"


def test_a_reply_that_stays_invalid_is_a_typed_failure_counted_per_task(server: ScriptedLLMServer,
                                                                       make_client: Client) -> None:
    server.script("atomic_questions", "I cannot help with that.")
    llm = make_client()
    with pytest.raises(LLMOutputError, match="invalid output after one repair"):
        llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    counts = llm.accounting.to_json()["by_task"]["atomic_questions"]
    assert (counts["calls"], counts["failed"]) == (2, 1)


def test_each_task_has_its_own_output_budget_capped_by_the_setting(server: ScriptedLLMServer,
                                                                  make_client: Client) -> None:
    server.script("atomic_questions", GOOD)
    server.script("question_class", {"label": "factual"})
    from kg.llm import QuestionClass

    make_client().complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    make_client(max_tokens=50).complete_structured("question_class", MESSAGES, QuestionClass)
    budgets = [r.body["max_tokens"] for r in server.chat_requests()]
    assert budgets == [384, 50]


def test_the_budget_is_fitted_into_a_known_context_window(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", GOOD)
    long = [{"role": "user", "content": "word " * 900}]
    make_client(context_tokens=1200).complete_structured("atomic_questions", long, AtomicQuestions)
    (sent,) = server.chat_requests()
    assert 48 <= sent.body["max_tokens"] < 384
    with pytest.raises(LLMOutputError, match="does not fit the model's context of 600 tokens"):
        make_client(context_tokens=600).complete_structured("atomic_questions", long, AtomicQuestions)
    assert len(server.chat_requests()) == 1  # nothing sent that could not fit


def test_a_timed_out_request_is_not_sent_again_to_a_one_request_server(server: ScriptedLLMServer,
                                                                      make_client: Client) -> None:
    server.script("atomic_questions", Fault.timeout(2.0), GOOD)
    llm = make_client(timeout_s=0.5, retry_timeouts=False)
    with pytest.raises(LLMUnavailableError, match="not sent again because the server serves one request"):
        llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert len(server.chat_requests()) == 1
    # An endpoint that serves many requests gets the retry.
    server.script("atomic_questions", Fault.timeout(2.0), GOOD)
    assert make_client(timeout_s=0.5).complete_structured("atomic_questions", MESSAGES, AtomicQuestions)


def test_a_seed_is_sent_when_set(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", GOOD)
    make_client(seed=3).complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    make_client(cache=False).complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert [r.body.get("seed") for r in server.chat_requests()] == [3, None]


def test_an_answer_of_markers_only_is_repaired(server: ScriptedLLMServer, make_client: Client) -> None:
    from kg.llm import CitedAnswer

    server.script("answer", {"answer": "[1]", "citations": [1]},
                  {"answer": "Oil is sampled every month [1].", "citations": [1]})
    llm = make_client()
    out = llm.complete_structured("answer", MESSAGES, CitedAnswer)
    assert out.answer == "Oil is sampled every month [1]."
    assert "not only citation markers" in server.chat_requests()[1].body["messages"][-1]["content"]
    assert llm.accounting.to_json()["by_task"]["answer"]["repaired"] == 1
