"""Neo4j 5.26 Community in Docker, from the repository's ``docker/compose.yaml``.

Used only when a Docker engine answers and no ``STRATA_NEO4J_URI`` is set. Each knowledge base is its
own compose project, ``strata-<kb>``: its own container (of the same name) and its own data volume
(compose prefixes volumes with the project name), on the knowledge base's ports. The password is the
same generated one the local server would use (a 0600 file under the knowledge base's home).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kg.errors import ProvisioningError
from kg.provisioning.local import LocalNeo4j, ServerInfo

__all__ = ["DockerNeo4j", "compose_file", "docker_available"]


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


@dataclass(frozen=True)
class DockerNeo4j:
    """The compose project of one knowledge base; ``local`` supplies its ports and password."""

    local: LocalNeo4j
    kb: str

    @property
    def project(self) -> str:
        return f"strata-{self.kb}"

    @property
    def volume(self) -> str:
        return f"{self.project}_strata-neo4j-data"

    def command(self, *args: str) -> tuple[list[str], dict[str, str]]:
        """The ``docker compose`` command line for this project, and the variables compose.yaml reads."""
        compose = compose_file()
        if compose is None:
            raise ProvisioningError("docker/compose.yaml not found: run Strata from its repository checkout")
        env = {
            "STRATA_CONTAINER": self.project,
            "STRATA_NEO4J_BOLT_PORT": str(self.local.settings.bolt_port),
            "STRATA_NEO4J_HTTP_PORT": str(self.local.settings.http_port),
        }
        return ["docker", "compose", "-f", str(compose), "-p", self.project, *args], env

    def _run(self, *args: str, password: bool = False) -> subprocess.CompletedProcess[str]:
        cmd, env = self.command(*args)
        # compose interpolates the whole file for every command, so NEO4J_PASSWORD must always be set.
        env["NEO4J_PASSWORD"] = self.local.password() if password else "unused"
        try:
            proc = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise ProvisioningError(f"cannot run docker for {self.project}: {exc}; install Docker (with the "
                                    "compose plugin) or start this knowledge base's Docker engine") from exc
        if proc.returncode != 0:
            raise ProvisioningError(f"docker compose {args[0]} ({self.project}) failed: "
                                    f"{proc.stderr.strip()[-800:]}")
        return proc

    def running(self) -> bool:
        return bool(self._run("ps", "-q", "neo4j").stdout.strip())

    def start(self) -> ServerInfo:
        """``docker compose up --wait``: starts the container, or finds it running."""
        was_running = self.running()
        self._run("up", "-d", "--wait", password=True)
        return self.local.info(None, started=not was_running)

    def stop(self) -> bool:
        """Stop the container (its volume, and so the data, is kept); ``False`` if it was not running."""
        if not self.running():
            return False
        self._run("stop")
        return True
