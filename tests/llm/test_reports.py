"""The ``"llm"`` block of command reports: load and ask over real HTTP against the scripted server (numbers
equal to what it reported), and an offline evaluation report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kg.app.cli.commands  # noqa: F401  (registers the commands, as ``strata`` does)
from kg.app.cli import app
from kg.embeddings import HashingEmbedder
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from kg.testing.scripted_llm import ScriptedLLMServer
from tests.conftest import TestServer, cli_output

PRICES = {"scripted-model": [1.5, 6.0]}
COUNTERS = {"calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd"}
OUTCOMES = {"failed": 0, "repaired": 0, "truncated": 0, "invalid_items": 0}
DOC = ("# Morning Edition\n\nMorning Edition is a news program produced by NPR. It was first hosted by "
       "Bob Edwards in 1979. The program airs on weekday mornings.\n")


def expected_block(server: ScriptedLLMServer) -> dict[str, object]:
    """The llm block the scripted server's own records call for."""
    by_task: dict[str, dict[str, float]] = {}
    for r in server.chat_requests():
        if r.usage is None:
            continue
        entry = by_task.setdefault(r.task or "default", {"calls": 0, "cache_hits": 0, "prompt_tokens": 0,
                                                         "completion_tokens": 0, "cost_usd": 0.0, **OUTCOMES})
        entry["calls"] += 1
        entry["prompt_tokens"] += r.usage["prompt_tokens"]
        entry["completion_tokens"] += r.usage["completion_tokens"]
    for entry in by_task.values():
        entry["cost_usd"] = (entry["prompt_tokens"] * 1.5 + entry["completion_tokens"] * 6.0) / 1e6
    reported = server.reported_usage()
    return {"model": "scripted-model", "offline": False, "response_format": "json_schema", "cache_hits": 0,
            **OUTCOMES, **reported,
            "cost_usd": sum(e["cost_usd"] for e in by_task.values()), "by_task": by_task}


def assert_block(block: dict[str, object], expected: dict[str, object]) -> None:
    assert set(block) == COUNTERS | set(OUTCOMES) | {"model", "offline", "response_format", "by_task"}
    by_task = block.pop("by_task")
    want_by_task = expected.pop("by_task")
    assert block == pytest.approx(expected)
    assert isinstance(by_task, dict) and isinstance(want_by_task, dict) and set(by_task) == set(want_by_task)
    for task, usage in by_task.items():
        assert set(usage) == COUNTERS | set(OUTCOMES) and usage == pytest.approx(want_by_task[task])


@pytest.fixture
def cli_env(store: GraphStore, neo4j_server: TestServer, tmp_path: Path) -> dict[str, str]:
    ensure_schema(store, HashingEmbedder(256).name, 256)  # what STRATA_EMBEDDER=hash configures
    return {"STRATA_NEO4J_URI": neo4j_server.uri, "STRATA_NEO4J_USER": neo4j_server.user,
            "STRATA_NEO4J_PASSWORD": neo4j_server.password, "STRATA_EMBEDDER": "hash",
            "STRATA_HOME": str(tmp_path / "home"), "STRATA_CACHE_DIR": str(tmp_path / "cache"),
            "STRATA_LLM_MODEL": "scripted-model", "STRATA_LLM_PRICES": json.dumps(PRICES),
            "STRATA_LLM_MAX_RETRIES": "0"}


def test_load_and_ask_report_what_the_server_reported(cli_env: dict[str, str], store: GraphStore,
                                                      tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "npr.md").write_text(DOC, "utf-8")
    with ScriptedLLMServer() as server:
        server.script("enhanced_chunk", {"sentences": 50, "summary": "NPR's morning news program."})
        server.script("atomic_questions", {"questions": ["Who first hosted Morning Edition?"]})
        server.script("answer", {"answer": "Bob Edwards [1]", "citations": [1]})
        env = {**cli_env, "STRATA_LLM_BASE_URL": server.base_url}
        runner = CliRunner()

        loaded = runner.invoke(app, ["load", str(tmp_path / "docs"), "--distill", "atoms", "--json", "-"], env=env)
        assert loaded.exit_code == 0, cli_output(loaded)
        report = json.loads(loaded.stdout)
        assert {"enhanced_chunk", "atomic_questions"} <= set(report["llm"]["by_task"])
        assert_block(report["llm"], expected_block(server))  # includes the distillation after loading
        assert "llm: scripted-model: " in loaded.stderr

        server.reset()
        server.script("answer", {"answer": "Bob Edwards [1]", "citations": [1]})
        store.write("meta/await_indexes", timeout_s=60)
        asked = runner.invoke(app, ["ask", "Who first hosted Morning Edition?", "--method", "naive-r", "--json"],
                              env=env)
        assert asked.exit_code == 0, cli_output(asked)
        answer = json.loads(asked.stdout)
        assert answer["offline"] is False and list(answer["llm"]["by_task"]) == ["answer"]
        assert_block(answer["llm"], expected_block(server))
        assert "llm: scripted-model: 1 calls" in asked.stderr


@pytest.mark.neo4j
def test_offline_eval_report_has_the_llm_block(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = CliRunner().invoke(app, [
        "eval", "retrieval", "--dataset", str(shared_data / "hotpotqa_sample" / "hotpotqa_train.json"),
        "--limit", "3", "--k", "2", "--methods", "bm25", "--json", str(out),
    ], env={"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": ""})
    assert result.exit_code == 0, cli_output(result)
    report = json.loads(out.read_text("utf-8"))
    assert report["llm"] == {"model": None, "offline": True, "response_format": None, "calls": 0, "cache_hits": 0,
                             "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0, **OUTCOMES, "by_task": {}}
    assert "llm: offline (no LLM configured): 0 calls" in result.stderr
