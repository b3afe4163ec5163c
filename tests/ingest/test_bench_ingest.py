"""End to end: ``strata bench ingest`` on a few generated passages in its own throwaway Neo4j. It checks the
JSON contract and that both writers wrote every chunk, never a speed (that is what the benchmark reports)."""

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
def test_bench_ingest_reports_both_writers(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "ingest", "--passages", "40", "--json", str(out)],
                                env={"STRATA_HOME": str(tmp_path / "home")})
    assert result.exit_code == 0, cli_output(result)
    report = json.loads(out.read_text("utf-8"))
    assert {"passages", "batched_chunks_per_s", "naive_chunks_per_s", "ratio", "peak_rss_mb"} <= set(report)
    assert report["passages"] == 40 and report["chunks"] >= 40
    assert len(report["batched_runs_seconds"]) == 3
    assert report["batched_seconds"] == sorted(report["batched_runs_seconds"])[1]
    assert report["batched_cold_chunks_per_s"] == pytest.approx(report["chunks"] / report["batched_cold_seconds"],
                                                                 rel=0.01)
    assert report["ratio"] == pytest.approx(report["batched_chunks_per_s"] / report["naive_chunks_per_s"], rel=0.01)
    assert report["peak_rss_mb"] > 0
    # The title-mention pass is timed beside the writer, on the same passages (each names its neighbour).
    assert report["mention_links_seconds"] > 0 and report["mention_links_documents_per_s"] > 0
    assert report["mention_links_references"] >= 30
