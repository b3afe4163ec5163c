"""``strata ask`` on a real Neo4j (the test server), offline: an extractive answer that says so."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import kg.cli.commands  # noqa: F401  (registers the commands, as ``strata`` does)
from kg.cli import app
from kg.embeddings import HashingEmbedder
from kg.graph.schema import ensure_schema
from kg.graph.store import GraphStore
from kg.ingest import Ingestor
from tests.conftest import TestServer
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
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["offline"] is True and data["method"] == "naive-r" and data["answer"].endswith("[1]")
    assert data["citations"][0]["title"] and data["citations"][0]["char_end"] > 0
    text = runner.invoke(app, ["ask", "Who was the first host of Morning Edition?", "--trace"], env=env)
    assert text.exit_code == 0 and "offline extractive answer" in text.output
