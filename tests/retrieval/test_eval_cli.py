"""End to end: ``strata eval retrieval`` on a slice of the HotpotQA sample, in its own throwaway Neo4j
(``strata retrieve`` is in test_retrieve_cli.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kg.app.cli import app
from kg.app.cli import commands as _commands  # noqa: F401 - registers the commands
from tests.conftest import cli_output


@pytest.mark.neo4j
@pytest.mark.slow
def test_eval_retrieval_json_shape_and_ranges(shared_data: Path, tmp_path: Path) -> None:
    out, lines = tmp_path / "report.json", tmp_path / "questions.jsonl"
    result = CliRunner().invoke(app, [
        "eval", "retrieval", "--dataset", str(shared_data / "hotpotqa_sample" / "hotpotqa_train.json"),
        "--limit", "10", "--k", "2,5", "--methods", "bm25,dense,chunk,fulltext,hybrid,strata", "--json", str(out),
        "--per-question", str(lines),
    ], env={"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": ""})
    assert result.exit_code == 0, cli_output(result)
    report = json.loads(out.read_text("utf-8"))
    assert set(report) == {"dataset", "n_questions", "n_scored", "n_passages", "embedder", "llm", "results",
                           "types", "by_type"}
    assert report["n_questions"] == 10
    assert report["llm"]["offline"] is True and report["llm"]["model"] is None and report["llm"]["calls"] == 0
    assert report["n_scored"] == 10  # every HotpotQA question has gold passages
    assert 10 < report["n_passages"] <= 100  # the union of 10 questions' paragraphs, duplicates merged
    assert set(report["results"]) == {"bm25", "dense", "chunk", "fulltext", "hybrid", "strata"}
    for scores in report["results"].values():
        assert set(scores) == {"recall@2", "recall@5", "sp_precision", "sp_recall", "sp_f1", "ms_per_query"}
        assert all(0.0 <= scores[key] <= 1.0 for key in scores if key != "ms_per_query")
        assert scores["recall@2"] <= scores["recall@5"]
        assert scores["ms_per_query"] > 0  # timed: any query takes longer than the 10 µs the report resolves
    for method in ("chunk", "fulltext", "hybrid", "strata"):  # a Bolt round trip each: the unit is ms, not s
        assert report["results"][method]["ms_per_query"] >= 0.1, (method, report["results"][method])
    # The first 10 questions: 7 bridge and 3 comparison ones, each method's recall broken down by them.
    assert report["types"] == {"bridge": 7, "comparison": 3}
    assert set(report["by_type"]) == set(report["results"])
    for method, types in report["by_type"].items():
        assert set(types) == {"bridge", "comparison"}
        for k in ("recall@2", "recall@5"):  # the overall recall is the types' recall weighted by their counts
            overall = (7 * types["bridge"][k] + 3 * types["comparison"][k]) / 10
            assert overall == pytest.approx(report["results"][method][k], abs=1e-3), (method, k)
    assert "recall@5 per question type" in result.output
    # Per question: the gold passages by title, every method's top 5 titles and the gold's ranks in them, which
    # give the report's recall.
    questions = [json.loads(line) for line in lines.read_text("utf-8").splitlines()]
    assert len(questions) == 10 and all(len(q["gold"]) == 2 for q in questions)
    for method, scores in report["results"].items():
        ranks = [q["methods"][method]["gold_ranks"] for q in questions]
        assert all(len(q["methods"][method]["top"]) <= 5 for q in questions)
        for k in (2, 5):
            mean = sum(sum(1 for r in rs if r is not None and r <= k) / len(rs) for rs in ranks) / len(ranks)
            assert mean == pytest.approx(scores[f"recall@{k}"], abs=1e-3), (method, k)
        for q, rs in zip(questions, ranks, strict=True):  # a ranked gold passage is in the top at its rank
            assert all(q["methods"][method]["top"][r - 1] == title for title, r in zip(q["gold"], rs, strict=True)
                       if r is not None)
    # Same embedder, same passages: the vector index agrees with exact numpy on these one-chunk passages.
    assert report["results"]["chunk"]["recall@5"] == pytest.approx(report["results"]["dense"]["recall@5"], abs=0.1)


def test_eval_rejects_unknown_methods(shared_data: Path) -> None:
    result = CliRunner().invoke(app, [
        "eval", "retrieval", "--dataset", str(shared_data / "hotpotqa_sample" / "hotpotqa_train.json"),
        "--methods", "bm25,magic"])
    assert result.exit_code == 2
    assert "magic" in result.output
