"""An interrupted build always finishes: `strata load` resumes the distillation an earlier run left, and the
load report and `strata stats` say what is pending."""

from __future__ import annotations

import json
from pathlib import Path

from neo4j import RoutingControl
from typer.testing import CliRunner

from kg.app.cli import app
from kg.store.base import GraphStore
from tests.conftest import TestServer, cli_output
from tests.surfaces.test_cli import server_env

runner = CliRunner()


def corpus(root: Path) -> Path:
    root.mkdir()
    for n in range(4):
        (root / f"doc{n}.md").write_text(
            f"# Report {n}\n\nSite North{n} runs {n + 3} turbines. The gearbox of Site North{n} failed in 2023.\n\n"
            f"## Repairs\n\nAlice Smith repaired the gearbox at Site North{n} in March.\n", "utf-8")
    return root


def test_a_load_resumes_pending_distillation_and_reports_what_is_left(
        tmp_path: Path, neo4j_server: TestServer, store: GraphStore) -> None:
    env = server_env(neo4j_server, tmp_path / "home")
    folder = corpus(tmp_path / "corpus")
    first = runner.invoke(app, ["load", str(folder), "--distill", "none", "--json", "-"], env=env)
    assert first.exit_code == 0, cli_output(first)
    report = json.loads(first.stdout)
    chunks = store.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
    assert report["pending"] == {"atoms": chunks, "triples": chunks}
    assert "strata distill" in report["pending_hint"] and "pending" in first.stderr

    stats = json.loads(runner.invoke(app, ["stats", "--json"], env=env).stdout)
    assert stats["pending"]["atoms"] == chunks and stats["pending"]["triples"] == chunks

    # An interrupted build: half the chunks distilled, the other half not (as a kill mid-distillation leaves).
    runner.invoke(app, ["distill", "--only", "atoms,triples"], env=env)
    store.query("MATCH (c:Chunk) WHERE c.order % 2 = 0 SET c.distilled = []", routing=RoutingControl.WRITE)
    assert json.loads(runner.invoke(app, ["stats", "--json"], env=env).stdout)["pending"]["atoms"] > 0

    again = runner.invoke(app, ["load", str(folder), "--json", "-"], env=env)
    assert again.exit_code == 0, cli_output(again)
    data = json.loads(again.stdout)
    assert data["summary"]["unchanged"] == 4
    assert data["pending"] == {"atoms": 0, "triples": 0} and "pending_hint" not in data
    assert data["distill"]["layers"]["atoms"]["pending"] > 0  # the resumed work
    assert store.query("MATCH (c:Chunk) WHERE NOT EXISTS { (c)<-[]-(:Atom) } AND NOT EXISTS { (:Atom)-[]->(c) } "
                       "RETURN count(c) AS n")[0]["n"] == 0
    stats = json.loads(runner.invoke(app, ["stats", "--json"], env=env).stdout)
    assert stats["pending"]["atoms"] == 0 and stats["pending"]["triples"] == 0
