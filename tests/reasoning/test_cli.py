"""``strata ask`` on a real Neo4j (the test server), offline: an extractive answer that says so; and
``strata eval qa`` offline, in its own throwaway Neo4j."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kg.app.cli.commands  # noqa: F401  (registers the commands, as ``strata`` does)
from kg.app.cli import app
from kg.embeddings import HashingEmbedder
from kg.layers.corpus.ingest import Ingestor
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from tests.conftest import TestServer, cli_output
from tests.reasoning.conftest import DOCS


def test_ask_offline_json_and_text(store: GraphStore, neo4j_server: TestServer, tmp_path: Path) -> None:
    embedder = HashingEmbedder(256)  # what STRATA_EMBEDDER=hash configures
    ensure_schema(store, embedder.name, embedder.dimensions)
    (tmp_path / "docs").mkdir()
    for key, (title, text) in DOCS.items():
        (tmp_path / "docs" / f"{key}.md").write_text(f"# {title}\n\n{text}\n", "utf-8")
    assert Ingestor(store, embedder).load([tmp_path / "docs"]).failed == 0
    store.write("meta/await_indexes", timeout_s=60)
    env = {"STRATA_NEO4J_URI": neo4j_server.uri, "STRATA_NEO4J_USER": neo4j_server.user,
           "STRATA_NEO4J_PASSWORD": neo4j_server.password, "STRATA_LLM_BASE_URL": "", "STRATA_EMBEDDER": "hash",
           "STRATA_HOME": str(tmp_path / "home"), "STRATA_CACHE_DIR": str(tmp_path / "cache")}
    runner = CliRunner()
    result = runner.invoke(app, ["ask", "Who was the first host of Morning Edition?", "--method", "naive-r",
                                 "--json"], env=env)
    assert result.exit_code == 0, cli_output(result)
    data = json.loads(result.stdout)
    assert data["offline"] is True and data["method"] == "naive-r" and data["answer"].endswith("[1]")
    assert data["citations"][0]["title"] and data["citations"][0]["char_end"] > 0
    text = runner.invoke(app, ["ask", "Who was the first host of Morning Edition?", "--trace"], env=env)
    assert text.exit_code == 0 and "offline extractive answer" in text.output


def _record(qid: str, question: str, answer: str, paragraphs: dict[str, list[str]]) -> dict[str, object]:
    first = next(iter(paragraphs))
    return {"_id": qid, "question": question, "answer": answer, "type": "bridge", "level": "easy",
            "supporting_facts": [[first, 0]], "context": [[t, sents] for t, sents in paragraphs.items()]}


@pytest.mark.neo4j
@pytest.mark.slow
def test_eval_qa_offline_writes_the_report_and_chart(tmp_path: Path) -> None:
    dataset = tmp_path / "tiny.json"
    dataset.write_text(json.dumps([
        _record("q1", "Which river runs through Velmora?", "the Ostra",
                {"Velmora": ["Velmora is a town on the Ostra river.", "It has a stone bridge."],
                 "Ostra": ["The Ostra is a river in the northern hills."]}),
        _record("q2", "Who founded the Kestrel Lantern Guild?", "Imre Dovan",
                {"Kestrel Lantern Guild": ["The Kestrel Lantern Guild was founded by Imre Dovan in 1884."]}),
        _record("q3", "What colour is the Brannoch flag?", "green",
                {"Brannoch": ["The Brannoch flag is green with a white star."]}),
    ]), "utf-8")
    out = tmp_path / "out" / "qa.json"
    env = {"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": "", "STRATA_EMBEDDER": "hash"}
    result = CliRunner().invoke(app, ["eval", "qa", "--dataset", str(dataset), "--methods", "naive-r,zero-shot-cot",
                                      "--limit", "2", "--json", str(out)], env=env)
    assert result.exit_code == 0, cli_output(result)
    report = json.loads(out.read_text("utf-8"))
    assert set(report) == {"dataset", "protocol", "corpus", "n_questions", "n_passages", "llm", "distillation",
                           "judge", "results", "questions"}
    assert report["dataset"] == "tiny.json" and report["n_questions"] == 2
    assert report["protocol"] == "question-paragraphs" and report["n_passages"] == 3  # q1's and q2's paragraphs
    assert set(report["results"]) == {"naive-r", "zero-shot-cot"}
    for scores in report["results"].values():
        # Today's keys stay, beside the evidence, cost and failure ones.
        assert {"em", "f1", "precision", "recall", "accuracy", "llm_calls_per_question",
                "tokens_per_question"} <= set(scores)
        assert {"evidence_recall", "evidence_precision", "seconds_per_question", "failed", "by_type"} <= set(scores)
        assert all(0.0 <= scores[k] <= 1.0 for k in ("em", "f1", "precision", "recall"))
        assert scores["accuracy"] is None and scores["llm_calls_per_question"] == 0.0 and scores["failed"] == 0.0
        assert set(scores["by_type"]) == {"bridge"}
    assert report["results"]["naive-r"]["recall"] > 0  # extractive answers from the loaded passages
    chart = out.with_suffix(".png")
    assert chart.is_file() and chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
