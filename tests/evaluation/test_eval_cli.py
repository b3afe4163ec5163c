"""``strata eval qa`` offline on a few questions of the shared HotpotQA sample, in its own throwaway Neo4j,
then ``strata eval show`` on the report it wrote; and where the judge's endpoint comes from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

import kg.app.cli.commands  # noqa: F401  (registers the commands, as ``strata`` does)
from kg.app.cli import app
from kg.app.cli.commands.evaluate import judge_settings
from kg.app.evaluation.runner import layers_for
from kg.errors import ConfigError
from kg.settings import LLMSettings
from kg.testing import ScriptedLLMServer
from loaders import load_questions
from tests.conftest import cli_output


@pytest.mark.neo4j
@pytest.mark.slow
def test_eval_qa_then_eval_show_on_the_hotpotqa_sample(shared_data: Path, tmp_path: Path) -> None:
    dataset = shared_data / "hotpotqa_sample" / "hotpotqa_train.json"
    questions = load_questions(dataset)[:3]
    out = tmp_path / "qa.json"
    env = {"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": "", "STRATA_EMBEDDER": "hash"}
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "qa", "--dataset", str(dataset), "--methods", "naive-r,decompose",
                                 "--limit", "3", "--json", str(out)], env=env)
    assert result.exit_code == 0, cli_output(result)
    report = json.loads(out.read_text("utf-8"))
    # The PIKE-RAG protocol: the knowledge base holds the three questions' own paragraphs, no more.
    paragraphs = {p for q in questions for p in q.passages}
    assert report["protocol"] == "question-paragraphs" and report["corpus"] is None
    assert report["n_passages"] == len(paragraphs)
    types = {q.type for q in questions}
    for method in ("naive-r", "decompose"):
        scores = report["results"][method]
        assert set(scores["by_type"]) == types and scores["failed"] == 0.0
        assert sum(t["questions"] for t in scores["by_type"].values()) == 3
        assert 0.0 < scores["evidence_recall"] <= 1.0 and 0.0 < scores["evidence_precision"] <= 1.0
    # Offline, the layers the two methods read were distilled offline; the pseudo-graph (pgrag's) was not built.
    assert report["distillation"]["offline"] is True
    assert set(report["distillation"]["layers"]) == {"atoms", "triples", "tags"}
    records = report["questions"]
    kept = [json.loads(line) for line in out.with_suffix(".records.jsonl").read_text("utf-8").splitlines()]
    assert kept == records  # written one by one as they were made
    assert [(r["method"], r["id"]) for r in records] == [(m, q.id) for m in ("naive-r", "decompose")
                                                         for q in questions]
    assert all(r["trace"] for r in records)
    # Evidence is kept with every record: naive-r's flat retrieval (cosine >= 0.2) finds some for each of these
    # questions. Offline decompose answers from `hr`, whose thresholds one of them misses with the hashing
    # embedder's exact scores; a record without evidence must then have abstained, never answered.
    assert all(r["evidence"] for r in records if r["method"] == "naive-r")
    assert all(r["evidence"] or r["abstained"] for r in records)
    gold_titles = {q.id: set(q.gold_titles) for q in questions}
    for r in records:  # a chunk is marked gold exactly when its title is one of its question's gold titles
        assert all((c["gold"] is not None) == (c["title"] in gold_titles[r["id"]]) for c in r["evidence"])

    first = questions[0]
    shown = runner.invoke(app, ["eval", "show", str(out), "--question", first.id], env=env)
    assert shown.exit_code == 0, cli_output(shown)
    assert first.question in shown.output and "[naive-r]" in shown.output and "[decompose]" in shown.output
    assert repr(records[0]["prediction"]) in shown.output
    as_json = runner.invoke(app, ["eval", "show", str(out), "--question", first.id, "--json"], env=env)
    assert json.loads(as_json.stdout) == [r for r in records if r["id"] == first.id]
    table = runner.invoke(app, ["eval", "show", str(out)], env=env)
    assert table.exit_code == 0 and "naive-r" in table.output and "EvRec" in table.output
    missing = runner.invoke(app, ["eval", "show", str(out), "--question", "no-such-id"], env=env)
    assert missing.exit_code == 2


@pytest.mark.neo4j
@pytest.mark.slow
def test_offline_layers_with_a_model_pay_only_for_the_answers(shared_data: Path, tmp_path: Path) -> None:
    dataset = shared_data / "hotpotqa_sample" / "hotpotqa_train.json"
    out = tmp_path / "qa.json"
    with ScriptedLLMServer() as server:
        server.script("answer", {"answer": "Yes [1].", "citations": [1], "reasoning": "r"})
        server.script("judge", {"score": 0.0, "correct": False})
        env = {"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": server.base_url,
               "STRATA_LLM_MODEL": "scripted", "STRATA_EMBEDDER": "hash"}
        result = CliRunner().invoke(app, ["eval", "qa", "--dataset", str(dataset), "--methods", "naive-r",
                                          "--limit", "2", "--offline-layers", "--json", str(out)], env=env)
        tasks = {r.task for r in server.chat_requests()}
    assert result.exit_code == 0, cli_output(result)
    report = json.loads(out.read_text("utf-8"))
    assert report["distillation"]["offline"] is True and report["distillation"]["llm"]["calls"] == 0
    assert tasks == {"answer", "judge"}  # no distillation task reached the model (it also judges, by default)
    assert report["results"]["naive-r"]["llm_calls_per_question"] == 1.0


def test_the_pseudograph_is_built_only_for_the_methods_that_read_it() -> None:
    assert "pseudograph" not in layers_for(["naive-r", "decompose", "kg2rag"])
    assert "pseudograph" in layers_for(["naive-r", "pgrag"]) and "pseudograph" in layers_for(["auto"])
    assert {"atoms", "triples"} <= set(layers_for(["decompose"]))


def test_the_judge_endpoint_comes_from_the_judge_options() -> None:
    answering = LLMSettings(base_url="http://answer:8080/v1", model="qwen-1.5b", api_key=SecretStr("answer-key"),
                            task_models={"judge": "qwen-0.5b"})
    assert judge_settings(answering, None, None, None) is None  # the answering model judges
    other = judge_settings(answering, "gpt-4o-mini", "https://judge.example/v1", "judge-key")
    assert other is not None and (other.base_url, other.model) == ("https://judge.example/v1", "gpt-4o-mini")
    assert other.api_key.get_secret_value() == "judge-key" and other.task_models == {}
    same_endpoint = judge_settings(answering, "qwen-7b", None, None)
    assert same_endpoint is not None and same_endpoint.base_url == "http://answer:8080/v1"
    assert same_endpoint.api_key.get_secret_value() == "answer-key" and same_endpoint.model == "qwen-7b"
    with pytest.raises(ConfigError, match="--judge-base-url"):
        judge_settings(LLMSettings(), "gpt-4o-mini", None, None)  # offline answering, and no judge endpoint
