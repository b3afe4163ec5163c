"""End to end: ``strata bench query`` on a small generated corpus in its own throwaway Neo4j. It checks
the JSON contract and that every method ran, never a timing (speed is what the benchmark reports)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kg.app.bench.query import BENCH_METHODS, generate_passages
from kg.app.cli import app
from kg.app.cli import commands as _commands  # noqa: F401 - registers the commands


def test_generated_passages_are_deterministic_and_name_a_neighbour() -> None:
    first, again = generate_passages(50), generate_passages(50)
    assert [d.text for d in first] == [d.text for d in again]
    assert len({d.title for d in first}) == 50
    assert all(" near Place " in d.text for d in first)


@pytest.mark.neo4j
@pytest.mark.slow
def test_bench_query_reports_every_method_and_the_numpy_yardstick(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "query", "--passages", "60", "--queries", "5", "--json", str(out)],
                                env={"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": ""})
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text("utf-8"))
    assert set(report) == {"passages", "results", "numpy_exact"}, report.get("unavailable")
    assert report["passages"] == 60
    assert set(report["results"]) == set(BENCH_METHODS)
    for latency in [*report["results"].values(), report["numpy_exact"]]:
        assert set(latency) == {"p50_ms", "p95_ms"}
        assert 0 < latency["p50_ms"] <= latency["p95_ms"]
