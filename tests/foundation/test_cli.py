"""The `strata` command line on a private home: neo4j start/status/stop, init, config, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kg.provisioning import record_server_kind, recorded_server_kind
from kg.settings import Settings, free_port
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from tests.conftest import TestServer, jar_cache_dir


def strata(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kg.app.cli", *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def private_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_")}
    env.update(STRATA_HOME=str(home), STRATA_CACHE_DIR=str(jar_cache_dir()), STRATA_EMBEDDER="hash",
               STRATA_NEO4J_BOLT_PORT=str(free_port()), STRATA_NEO4J_HTTP_PORT=str(free_port()),
               STRATA_NEO4J_HEAP="512m", STRATA_NEO4J_PAGECACHE="128m")
    return env


@pytest.mark.neo4j
def test_neo4j_lifecycle_and_schema_through_the_cli(tmp_path: Path) -> None:
    env = private_env(tmp_path)
    settings = Settings.from_env(env)
    record_server_kind(settings, "local")  # the local server even on a host where a Docker engine answers
    started = strata(env, "neo4j", "start", "--json")
    try:
        assert started.returncode == 0, started.stderr
        info = json.loads(started.stdout)
        assert info["kind"] == "local" and info["started"] is True
        assert info["bolt_uri"].endswith(env["STRATA_NEO4J_BOLT_PORT"])
        assert json.loads(strata(env, "neo4j", "start", "--json").stdout)["started"] is False

        status = json.loads(strata(env, "neo4j", "status", "--json").stdout)
        assert status["version"].startswith("Neo4j/5.26") and status["schema_installed"] is False
        assert strata(env, "init").returncode == 0
        status = json.loads(strata(env, "neo4j", "status", "--json").stdout)
        assert status["schema_installed"] is True and status["embedder"].startswith("hash")
    finally:
        stopped = strata(env, "neo4j", "stop", "--settle")  # an idle server: one window of waiting
    assert "Stopped" in stopped.stderr and "still busy" not in stopped.stderr
    assert recorded_server_kind(settings) == "local"
    after = strata(env, "neo4j", "status", "--json")
    assert after.returncode == 1 and json.loads(after.stdout)["running"] is False


def test_config_hides_secrets(tmp_path: Path) -> None:
    env = private_env(tmp_path)
    env.update(STRATA_LLM_API_KEY="sk-very-secret-value", STRATA_NEO4J_URI="bolt://db.example:7687",
               STRATA_NEO4J_PASSWORD="db-secret-pw")
    shown = strata(env, "config", "--json")
    assert shown.returncode == 0, shown.stderr
    assert "sk-very-secret-value" not in shown.stdout and "db-secret-pw" not in shown.stdout
    assert json.loads(shown.stdout)["neo4j"]["uri"] == "bolt://db.example:7687"


def test_unreachable_server_exits_4_with_a_clear_message(tmp_path: Path) -> None:
    env = private_env(tmp_path)
    env.update(STRATA_NEO4J_URI=f"bolt://127.0.0.1:{free_port()}", STRATA_NEO4J_PASSWORD="x")
    result = strata(env, "documents")
    assert result.returncode == 4
    assert "no Neo4j answers at bolt://127.0.0.1" in result.stderr


def test_embedding_mismatch_exits_3_as_a_configuration_error(neo4j_server: TestServer, store: GraphStore,
                                                             tmp_path: Path) -> None:
    ensure_schema(store, "another-embedder", 4)
    env = private_env(tmp_path)
    env.update(STRATA_NEO4J_URI=neo4j_server.uri, STRATA_NEO4J_USER=neo4j_server.user,
               STRATA_NEO4J_PASSWORD=neo4j_server.password)
    result = strata(env, "documents")
    assert result.returncode == 3, result.stderr  # the fix is a setting (STRATA_EMBEDDER), not the server
    assert "another-embedder" in result.stderr
