"""Neo4j 5.26 Community in Docker, from the repository's ``docker/compose.yaml``.

Used only when a Docker engine answers and no ``STRATA_NEO4J_URI`` is set. The password is the same
generated one the local server uses (a 0600 file under Strata's home).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from kg.errors import ProvisioningError
from kg.server.local import LocalNeo4j, ServerInfo

__all__ = ["compose_file", "docker_available", "start_docker"]


def docker_available() -> bool:
    """True when a Docker engine answers (not merely when the client is installed)."""
    docker = shutil.which("docker")
    if docker is None:
        return False
    try:
        proc = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and bool(proc.stdout.strip())


def compose_file() -> Path | None:
    path = Path(__file__).resolve().parents[2] / "docker" / "compose.yaml"
    return path if path.is_file() else None


def start_docker(local: LocalNeo4j) -> ServerInfo:
    """``docker compose up --wait`` with the local server's ports and password."""
    compose = compose_file()
    if compose is None:
        raise ProvisioningError("docker/compose.yaml not found: run Strata from its repository checkout")
    env = {
        **os.environ,
        "NEO4J_PASSWORD": local.password(),
        "STRATA_NEO4J_BOLT_PORT": str(local.settings.bolt_port),
        "STRATA_NEO4J_HTTP_PORT": str(local.settings.http_port),
    }
    proc = subprocess.run(["docker", "compose", "-f", str(compose), "up", "-d", "--wait"],
                          env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ProvisioningError(f"docker compose failed: {proc.stderr.strip()[-800:]}")
    return local.info(None, started=True)
