from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from email.utils import formatdate
from pathlib import Path

import pytest

from kg.errors import (
    BudgetExceededError,
    ConfigError,
    LLMError,
    LLMOutputError,
    LLMTruncatedError,
    LLMUnavailableError,
)
from kg.llm import ATOMIC_QUESTIONS, AtomicQuestions, CitedAnswer, OfflineLLM, estimate_messages_tokens, make_llm
from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.settings import LLMSettings
from kg.store.base import GraphStore
from kg.testing.scripted_llm import Fault, Reply, ScriptedLLMServer, truncated

Client = Callable[..., OpenAICompatibleLLM]
MESSAGES = [
    {"role": "system", "content": "You atomize."},
    {"role": "user", "content": "Neo4j is a graph DB."},
]
GOOD = {"questions": ["What is Neo4j?"]}


def test_structured_json_schema(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", GOOD)
    out = make_client().complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert out.questions == ["What is Neo4j?"]
    (req,) = server.chat_requests()
    fmt = req.body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "atomic_questions"
    assert req.headers.get("x-strata-task") == "atomic_questions"
    assert req.body["model"] == "test-model"


def test_task_model_override_and_call_override(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", GOOD)
    llm = make_client(task_models={"atomic_questions": "small"})
    llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions, model="big", temperature=0.3)
    models = [r.body["model"] for r in server.chat_requests()]
    assert models == ["small", "big"]
    assert server.chat_requests()[1].body["temperature"] == 0.3


@pytest.mark.parametrize("mode", ["json_object", "text"])
def test_json_object_and_text_modes_extract(
    server: ScriptedLLMServer, make_client: Client, mode: str
) -> None:
    server.script("answer", "Here you go:\n```json\n" + json.dumps({"answer": "Yes [1]", "citations": [1]})
                  + "\n```\nHope it helps {not json}")
    out = make_client(response_format=mode).complete_structured("answer", MESSAGES, CitedAnswer)
    assert out.answer == "Yes [1]" and out.citations == [1]
    (req,) = server.chat_requests("answer")  # keyed by the X-Strata-Task header
    if mode == "json_object":
        assert req.body["response_format"] == {"type": "json_object"}
    else:
        assert "response_format" not in req.body
    assert 'Use exactly these field names, in this shape:\n{"answer": "..."' in req.body["messages"][0]["content"]


def test_complete_text(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("summary", "A summary.")
    assert make_client().complete_text("summary", MESSAGES) == "A summary."


def test_retry_after_is_honoured(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", Fault.rate_limit(retry_after=1), GOOD)
    start = time.monotonic()
    out = make_client().complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    reqs = server.chat_requests()
    assert out.questions == GOOD["questions"]
    assert [r.status for r in reqs] == [429, 200]
    assert reqs[1].started - reqs[0].finished >= 0.95
    assert time.monotonic() - start >= 1.0


def test_retry_after_http_date(server: ScriptedLLMServer, make_client: Client) -> None:
    when = formatdate(time.time() + 2, usegmt=True)
    server.script("atomic_questions", Fault.rate_limit(retry_after=when), GOOD)
    make_client().complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    reqs = server.chat_requests()
    assert reqs[1].started - reqs[0].finished >= 0.5  # date has 1 s resolution


def test_500_then_success(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", Fault.server_error(500), Fault.server_error(503), GOOD)
    llm = make_client()
    assert llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions).questions
    assert [r.status for r in server.chat_requests()] == [500, 503, 200]
    assert llm.accounting.to_json()["calls"] == 1


def test_timeout_then_success(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", Fault.timeout(1.5), GOOD)
    start = time.monotonic()
    out = make_client(timeout_s=0.3).complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert out.questions and time.monotonic() - start < 1.5
    assert len(server.chat_requests()) == 2


def test_dropped_connection_then_success(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", Fault.drop(), GOOD)
    assert make_client().complete_structured("atomic_questions", MESSAGES, AtomicQuestions).questions
    assert len(server.chat_requests()) == 2


def test_retries_exhausted(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", Fault.server_error(502))
    with pytest.raises(LLMUnavailableError, match="4 attempt"):
        make_client(max_retries=3).complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert len(server.chat_requests()) == 4


def test_non_retryable_fails_fast(server: ScriptedLLMServer, make_client: Client) -> None:
    with pytest.raises(LLMError, match="400"):  # no script: the server answers 400
        make_client().complete_text("unknown", MESSAGES)
    assert len(server.chat_requests()) == 1


def test_repair_of_malformed_json(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", '{"questions": ["What is', GOOD)
    out = make_client().complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert out.questions == GOOD["questions"]
    _first, repair = server.chat_requests()
    msgs = repair.body["messages"]
    assert msgs[-2] == {"role": "assistant", "content": '{"questions": ["What is'}
    assert "could not be used" in msgs[-1]["content"]


def test_repair_of_schema_violation(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", {"qs": []}, GOOD)
    make_client().complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert "questions" in server.chat_requests()[1].body["messages"][-1]["content"]


def test_output_error_after_failed_repair(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", "I cannot answer that.")
    with pytest.raises(LLMOutputError) as info:
        make_client().complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert info.value.task == "atomic_questions"
    assert "atomic_questions" in str(info.value) and "I cannot answer" in str(info.value)
    assert len(server.chat_requests()) == 2


def test_truncated_output_asks_for_less_and_is_never_read_as_complete(
    server: ScriptedLLMServer, make_client: Client
) -> None:
    # The cut reply holds a complete object: it is still not taken as the answer.
    server.script("atomic_questions", truncated('{"questions": ["a"]} and then {"questions": ["b'), GOOD)
    llm = make_client()
    out = llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert out == AtomicQuestions.model_validate(GOOD)
    assert "cut off at the length limit" in server.chat_requests()[1].body["messages"][-1]["content"]
    assert llm.accounting.to_json()["by_task"]["atomic_questions"]["truncated"] == 1


def test_truncated_twice_is_a_typed_failure(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", truncated('{"questions": ["a", "b'))
    llm = make_client()
    with pytest.raises(LLMTruncatedError, match="stopped at its limit of 384 tokens twice"):
        llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    counts = llm.accounting.to_json()["by_task"]["atomic_questions"]
    assert (counts["truncated"], counts["failed"], counts["calls"]) == (2, 1, 2)


def test_cache_rerun_makes_no_call(server: ScriptedLLMServer, make_client: Client, tmp_path: Path) -> None:
    server.script("atomic_questions", '{"questions": ["What is', GOOD)  # needs a repair the first time
    server.script("summary", "text")
    llm = make_client(cache_dir=tmp_path)
    first = llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    llm.complete_text("summary", MESSAGES)
    seen = len(server.requests)
    again = make_client(cache_dir=tmp_path)  # a fresh client: the cache is on disk
    assert again.complete_structured("atomic_questions", MESSAGES, AtomicQuestions) == first
    assert again.complete_text("summary", MESSAGES) == "text"
    assert len(server.requests) == seen
    acc = again.accounting.to_json()
    assert acc["calls"] == 0 and acc["cache_hits"] == 2
    assert acc["by_task"]["atomic_questions"]["cache_hits"] == 1
    # another prompt version is another key
    again.complete_structured("atomic_questions", MESSAGES, AtomicQuestions, prompt_version=2)
    assert len(server.requests) == seen + 1
    again.clear()
    again.complete_text("summary", MESSAGES)
    assert len(server.requests) == seen + 2


def test_cache_disabled(server: ScriptedLLMServer, make_client: Client, tmp_path: Path) -> None:
    server.script("atomic_questions", GOOD)
    llm = make_client(cache_dir=tmp_path, cache=False)
    llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert len(server.chat_requests()) == 2
    assert llm.accounting.to_json()["cache_hits"] == 0


def test_cache_threads(server: ScriptedLLMServer, make_client: Client, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    server.set_default(lambda body: {"questions": [body["messages"][-1]["content"]]})
    llm = make_client(cache_dir=tmp_path, max_concurrency=4)

    def run(i: int) -> list[str]:
        msgs = [{"role": "user", "content": f"chunk {i % 5}"}]
        return llm.complete_structured("atomic_questions", msgs, AtomicQuestions).questions

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(run, range(40)))
    assert results == [[f"chunk {i % 5}"] for i in range(40)]
    assert llm.cache is not None and len(llm.cache) == 5


def test_budget_stop(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", GOOD)
    llm = make_client(budget_tokens=300, max_tokens=100)
    llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    used = llm.accounting.total.tokens
    calls = 1
    with pytest.raises(BudgetExceededError):
        for _ in range(20):
            llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions, temperature=0.1 * calls)
            calls += 1
    assert len(server.chat_requests()) == calls
    assert llm.accounting.total.tokens <= 300
    assert used > 0


def test_budget_holds_calls_in_flight(server: ScriptedLLMServer, make_client: Client) -> None:
    """Concurrent calls reserve their worst case before waiting for a slot: the budget is never overshot."""
    from concurrent.futures import ThreadPoolExecutor

    server.script("atomic_questions", Reply(json.dumps(GOOD), delay_s=0.2))
    probe = [{"role": "user", "content": "chunk 0"}]
    worst = estimate_messages_tokens(probe) + 100
    budget = 2 * worst + worst // 2  # room for two calls' worst case, not three
    llm = make_client(budget_tokens=budget, max_tokens=100, max_concurrency=8)

    def run(i: int) -> str:
        try:
            llm.complete_structured("atomic_questions", [{"role": "user", "content": f"chunk {i}"}], AtomicQuestions)
        except BudgetExceededError:
            return "refused"
        return "done"

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(run, range(8)))
    assert outcomes.count("done") == 2 and outcomes.count("refused") == 6
    assert len(server.chat_requests()) == 2
    assert llm.accounting.total.tokens == sum(server.reported_usage()[k]
                                                    for k in ("prompt_tokens", "completion_tokens"))
    assert llm.accounting.total.tokens <= budget
    # Recording settles a reservation: the two calls used far less than max_tokens, so a third one fits now.
    assert budget - llm.accounting.total.tokens >= worst
    llm.complete_structured("atomic_questions", probe, AtomicQuestions)
    assert len(server.chat_requests()) == 3


def test_failed_call_releases_its_reservation(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", Fault.server_error(), GOOD)
    worst = estimate_messages_tokens(MESSAGES) + 100
    llm = make_client(budget_tokens=worst + 10, max_tokens=100, max_retries=0)
    with pytest.raises(LLMUnavailableError):
        llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions).questions == GOOD["questions"]


def test_budget_refuses_first_call(server: ScriptedLLMServer, make_client: Client) -> None:
    llm = make_client(budget_tokens=50, max_tokens=100)
    with pytest.raises(BudgetExceededError, match="atomic_questions"):
        llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert server.requests == []


def test_concurrency_limit(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", Reply(json.dumps(GOOD), delay_s=0.2))
    llm = make_client(max_concurrency=2)

    async def run() -> None:
        await asyncio.gather(*(
            llm.acomplete_structured(
                "atomic_questions", [{"role": "user", "content": str(i)}], AtomicQuestions
            )
            for i in range(6)
        ))

    asyncio.run(run())
    assert len(server.chat_requests()) == 6
    assert server.max_in_flight == 2


def test_concurrency_limit_shared_across_clients_and_threads(
    server: ScriptedLLMServer, make_client: Client
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    server.script("atomic_questions", Reply(json.dumps(GOOD), delay_s=0.15))
    clients = [make_client(max_concurrency=3) for _ in range(3)]
    with ThreadPoolExecutor(9) as pool:
        list(pool.map(
            lambda i: clients[i % 3].complete_structured(
                "atomic_questions", [{"role": "user", "content": f"q{i}"}], AtomicQuestions),
            range(9),
        ))
    assert server.max_in_flight == 3


def test_one_limit_per_endpoint_for_chat_and_embeddings(server: ScriptedLLMServer, make_client: Client) -> None:
    """The embedder asks for 4 in flight, the chat client for 2: the endpoint gets one limit, the smaller."""
    from concurrent.futures import ThreadPoolExecutor

    from kg.embeddings.openai import OpenAIEmbedder
    from kg.settings import EmbedderSettings

    server.script("atomic_questions", Reply(json.dumps(GOOD), delay_s=0.2))
    llm = make_client(max_concurrency=2)
    embedder = OpenAIEmbedder(EmbedderSettings(provider="openai", base_url=server.base_url, max_concurrency=4))
    try:
        def chat(i: int) -> None:
            llm.complete_structured("atomic_questions", [{"role": "user", "content": f"c{i}"}], AtomicQuestions)

        def embed(i: int) -> None:
            for j in range(10):
                embedder.embed([f"text {i} {j}"])

        with ThreadPoolExecutor(8) as pool:
            jobs = [pool.submit(chat, i) for i in range(4)] + [pool.submit(embed, i) for i in range(4)]
            for job in jobs:
                job.result()
    finally:
        embedder.close()
    assert len(server.chat_requests()) == 4 and len(server.requests) == 4 + 40
    assert server.max_in_flight == 2


def test_accounting_matches_server_and_prices(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", '{"bad', GOOD)
    server.script("answer", {"answer": "A [1]", "citations": [1]})
    llm = make_client(prices_per_mtok={"test-model": (2.0, 8.0), "big": (10.0, 30.0)})
    llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    llm.complete_structured("answer", MESSAGES, CitedAnswer, model="big")
    reported = server.reported_usage()
    acc = llm.accounting.to_json()
    assert set(acc) == {"model", "offline", "response_format", "calls", "cache_hits", "prompt_tokens",
                        "completion_tokens", "cost_usd", "failed", "repaired", "truncated", "invalid_items", "by_task"}
    assert acc["model"] == "test-model" and acc["offline"] is False and acc["response_format"] == "json_schema"
    assert acc["calls"] == reported["calls"] == 3
    assert acc["prompt_tokens"] == reported["prompt_tokens"]
    assert acc["completion_tokens"] == reported["completion_tokens"]
    atom = [r.usage for r in server.chat_requests("atomic_questions") if r.usage]
    ans = [r.usage for r in server.chat_requests("answer") if r.usage]
    assert atom and ans
    atom_p = sum(u["prompt_tokens"] for u in atom)
    atom_c = sum(u["completion_tokens"] for u in atom)
    ans_p, ans_c = ans[0]["prompt_tokens"], ans[0]["completion_tokens"]
    by = acc["by_task"]
    assert by["atomic_questions"] == {"calls": 2, "cache_hits": 0, "prompt_tokens": atom_p,
                                      "completion_tokens": atom_c,
                                      "cost_usd": pytest.approx((atom_p * 2 + atom_c * 8) / 1e6),
                                      "failed": 0, "repaired": 1, "truncated": 0, "invalid_items": 0}
    assert by["answer"]["cost_usd"] == pytest.approx((ans_p * 10 + ans_c * 30) / 1e6)
    assert acc["cost_usd"] == pytest.approx(by["answer"]["cost_usd"] + by["atomic_questions"]["cost_usd"])
    assert set(by["answer"]) == {"calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd", "failed",
                                 "repaired", "truncated", "invalid_items"}


def test_sync_api_inside_running_loop(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", GOOD)
    llm = make_client()

    async def inside() -> list[str]:
        return llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions).questions

    assert asyncio.run(inside()) == GOOD["questions"]


def test_api_key_not_logged(server: ScriptedLLMServer, make_client: Client,
                            caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    server.script("atomic_questions", Fault.server_error(500), GOOD)
    llm = make_client()
    llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    assert "sk-secret" not in caplog.text and "sk-secret" not in repr(llm)
    assert server.chat_requests()[0].headers["authorization"] == "Bearer sk-secret"


def test_offline_mode(tmp_path: Path) -> None:
    llm = make_llm(LLMSettings(), cache_dir=tmp_path)
    assert isinstance(llm, OfflineLLM) and llm.offline
    with pytest.raises(ConfigError, match="STRATA_LLM_BASE_URL"):
        llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions)
    with pytest.raises(ConfigError, match="STRATA_LLM_BASE_URL"):
        asyncio.run(llm.acomplete_text("answer", MESSAGES))


def test_make_llm_online(server: ScriptedLLMServer, tmp_path: Path) -> None:
    server.script("atomic_questions", GOOD)
    with make_llm(LLMSettings(base_url=server.base_url), cache_dir=tmp_path, base_backoff_s=0.01) as llm:
        assert not llm.offline
        assert llm.complete_structured("atomic_questions", MESSAGES, AtomicQuestions).questions


def test_a_task_renders_its_prompt_by_language(server: ScriptedLLMServer, make_client: Client) -> None:
    server.script("atomic_questions", GOOD)
    llm = make_client()
    out = llm.run(ATOMIC_QUESTIONS, title="Neo4j", chunk="Neo4j 是一个图数据库。")
    assert out.questions == GOOD["questions"]
    (req,) = server.chat_requests()
    assert "代词" in req.body["messages"][0]["content"]
    assert "Neo4j 是一个图数据库。" in req.body["messages"][1]["content"]
    with pytest.raises(ConfigError, match="STRATA_LLM_BASE_URL"):
        OfflineLLM().run(ATOMIC_QUESTIONS, title="x", chunk="y")


def test_judge_prompt_in_the_questions_language(server: ScriptedLLMServer, make_client: Client) -> None:
    from kg.app.evaluation.qa import judge

    server.script("judge", {"score": 1.0, "correct": True})
    llm = make_client()
    assert judge(llm, "晨间新闻节目的第一位主持人是谁?", ["鲍勃·爱德华兹"], "鲍勃·爱德华兹").correct
    assert judge(llm, "Who first hosted Morning Edition?", ["Bob Edwards"], "Bob Edwards").correct
    zh, en = (r.body["messages"][0]["content"] for r in server.chat_requests("judge"))
    assert "参考答案" in zh and "reference" in en.lower()


def test_key_points_prompt_file_in_the_questions_language(server: ScriptedLLMServer, make_client: Client,
                                                          store: GraphStore) -> None:
    from kg.embeddings import HashingEmbedder
    from kg.retrieval.methods.pgrag import PGRAGRetriever

    server.script("key_points", {"points": ["第一位主持人"]})
    pg = PGRAGRetriever(store, HashingEmbedder(16), llm=make_client())
    assert pg.key_points("晨间新闻节目的第一位主持人是谁?") == ["第一位主持人"]
    (req,) = server.chat_requests("key_points")
    assert [m["role"] for m in req.body["messages"]] == ["system", "user"]
    assert "要点" in req.body["messages"][0]["content"]
    assert req.body["messages"][1]["content"] == "晨间新闻节目的第一位主持人是谁?"
