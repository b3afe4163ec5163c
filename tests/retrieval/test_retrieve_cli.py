"""``strata retrieve`` end to end: documents loaded with ``strata load`` into the test Neo4j (offline
embedder and LLM), then the hits and their explanations as JSON."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kg.app.cli import app
from kg.app.cli import commands as _commands  # noqa: F401 - registers the commands
from kg.store.base import GraphStore
from tests.conftest import TestServer, cli_output

DOCUMENTS = {
    "elbe.md": "# The Elbe\n\nThe Elbe is a river in Central Europe. It flows past Hamburg into the North Sea.\n",
    "hudson.md": "# The Hudson\n\nThe Hudson is a river in New York. Newburgh lies on its western bank.\n",
}


def test_retrieve_prints_hits_with_explanations(neo4j_server: TestServer, store: GraphStore, tmp_path: Path) -> None:
    env = {"STRATA_HOME": str(tmp_path / "home"), "STRATA_NEO4J_URI": neo4j_server.uri,
           "STRATA_NEO4J_USER": neo4j_server.user, "STRATA_NEO4J_PASSWORD": neo4j_server.password,
           "STRATA_EMBEDDER": "hash", "STRATA_LLM_BASE_URL": "", "COLUMNS": "200"}
    for name, text in DOCUMENTS.items():
        (tmp_path / name).write_text(text, "utf-8")
    runner = CliRunner()
    loaded = runner.invoke(app, ["load", str(tmp_path / "elbe.md"), str(tmp_path / "hudson.md"), "--json", "-"],
                           env=env)
    assert loaded.exit_code == 0, cli_output(loaded)

    result = runner.invoke(app, ["retrieve", "Which river flows past Hamburg?", "--method", "hybrid", "--k", "3",
                                 "--json"], env=env)
    assert result.exit_code == 0, cli_output(result)
    hits = json.loads(result.stdout)
    assert 1 <= len(hits) <= 3
    assert hits[0]["title"] == "The Elbe" and "Hamburg" in hits[0]["text"]
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    for hit in hits:
        assert hit["chunk_id"] and hit["document_id"] and hit["char_end"] > hit["char_start"]
        # Every hit explains itself: which hybrid paths found it, with their raw scores.
        assert hit["sources"], hit
        assert {s["path"] for s in hit["sources"]} <= {"chunk", "atom", "fulltext", "fulltext_atom"}
    top_paths = {s["path"] for s in hits[0]["sources"]}
    assert "fulltext" in top_paths and "chunk" in top_paths  # "Hamburg" is a word only the Elbe's text has

    table = runner.invoke(app, ["retrieve", "Which river flows past Hamburg?", "--method", "hybrid", "--k", "3"],
                          env=env)
    assert table.exit_code == 0 and "The Elbe" in table.output and "fulltext" in table.output
