"""The Docker path without a Docker engine: one compose project, container and volume per knowledge base,
and the server kind a knowledge base was started with is the one later commands use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kg.errors import ConfigError
from kg.provisioning import docker_server, record_server_kind, recorded_server_kind
from kg.provisioning.docker import compose_file
from kg.settings import Settings


def settings_for(tmp_path: Path, kb: str) -> Settings:
    return Settings.from_env({"STRATA_HOME": str(tmp_path), "STRATA_CACHE_DIR": str(tmp_path / "cache")}, kb=kb)


def test_each_knowledge_base_is_its_own_compose_project(tmp_path: Path) -> None:
    commands = {kb: docker_server(settings_for(tmp_path, kb)).command("up", "-d", "--wait")
                for kb in ("default", "alpha")}
    for kb, (cmd, env) in commands.items():
        settings = settings_for(tmp_path, kb)
        assert cmd == ["docker", "compose", "-f", str(compose_file()), "-p", f"strata-{kb}", "up", "-d", "--wait"]
        assert env == {"STRATA_CONTAINER": f"strata-{kb}", "STRATA_NEO4J_BOLT_PORT": str(settings.local.bolt_port),
                       "STRATA_NEO4J_HTTP_PORT": str(settings.local.http_port)}
    assert commands["default"][1]["STRATA_NEO4J_BOLT_PORT"] != commands["alpha"][1]["STRATA_NEO4J_BOLT_PORT"]
    assert docker_server(settings_for(tmp_path, "alpha")).volume == "strata-alpha_strata-neo4j-data"


def test_compose_file_names_the_container_and_a_project_scoped_volume() -> None:
    # Without an engine, compose itself is not run; the file must take the container name from the
    # environment and declare its volume without a fixed `name:`, which would make every project share it.
    text = compose_file().read_text("utf-8")  # type: ignore[union-attr]
    assert "container_name: ${STRATA_CONTAINER:-strata-default}" in text
    volumes = text.split("\nvolumes:\n", 1)[1]
    assert volumes.strip() == "strata-neo4j-data:"


def test_the_server_kind_is_recorded_per_knowledge_base(tmp_path: Path) -> None:
    alpha, beta = settings_for(tmp_path, "alpha"), settings_for(tmp_path, "beta")
    assert recorded_server_kind(alpha) is None
    record_server_kind(alpha, "docker")
    assert (recorded_server_kind(alpha), recorded_server_kind(beta)) == ("docker", None)
    (alpha.local.home / "server.json").write_text('{"kind": "podman"}', "utf-8")
    with pytest.raises(ConfigError, match="unknown server kind 'podman'"):
        recorded_server_kind(alpha)


def test_neo4j_stop_uses_the_recorded_kind(tmp_path: Path) -> None:
    # A knowledge base recorded as Docker is stopped through compose: with no engine here, that fails
    # saying so (exit 4) instead of reporting on a local pid file that was never written.
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_")}
    env.update(STRATA_HOME=str(tmp_path), STRATA_CACHE_DIR=str(tmp_path / "cache"), PATH="/nonexistent")
    record_server_kind(Settings.from_env(env), "docker")
    result = subprocess.run([sys.executable, "-m", "kg.app.cli", "neo4j", "stop"], env=env, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 4, result.stderr
    assert "docker" in result.stderr.lower()
