"""Where Strata's Neo4j is: an existing server, a Docker container, or a local server it provisions.

Resolution order (:func:`ensure_endpoint`): ``settings.neo4j`` (STRATA_NEO4J_URI) when set; else the kind
of server this knowledge base was first started with (recorded in its home, because its data lives
there); else Docker when an engine answers; else a local Neo4j Community 5.26 from Maven Central jars on
Java 17.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Literal, get_args

from kg.errors import ConfigError, ProvisioningError
from kg.provisioning.docker import DockerNeo4j, docker_available
from kg.provisioning.local import NEO4J_VERSION, LocalNeo4j, ServerInfo
from kg.settings import Settings
from kg.shared.private import private_dir

__all__ = [
    "NEO4J_VERSION", "Endpoint", "LocalNeo4j", "ServerInfo", "ServerKind", "docker_server", "ensure_endpoint",
    "local_server", "record_server_kind", "recorded_server_kind",
]

ServerKind = Literal["local", "docker"]
_KIND_FILE = "server.json"


@dataclass(frozen=True)
class Endpoint:
    """How to reach the knowledge base's Neo4j. The password never appears in reprs."""

    uri: str
    user: str
    password: str = field(repr=False)
    database: str | None
    kind: Literal["remote", "docker", "local"]
    browser_url: str | None = None
    started: bool = False


def local_server(settings: Settings) -> LocalNeo4j:
    return LocalNeo4j(settings.local)


def docker_server(settings: Settings) -> DockerNeo4j:
    return DockerNeo4j(local_server(settings), settings.kb)


def recorded_server_kind(settings: Settings) -> ServerKind | None:
    """The kind of server this knowledge base runs on, once it has been started (``None`` before)."""
    path = settings.local.home / _KIND_FILE
    if not path.is_file():
        return None
    kind = json.loads(path.read_text("utf-8")).get("kind")
    if kind not in get_args(ServerKind):
        raise ConfigError(f"{path}: unknown server kind {kind!r}; expected one of {get_args(ServerKind)}")
    return kind  # type: ignore[no-any-return]


def record_server_kind(settings: Settings, kind: ServerKind) -> None:
    """Pin the knowledge base to ``kind`` (``strata neo4j start`` does this on first start)."""
    private_dir(settings.local.home)
    path = settings.local.home / _KIND_FILE
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"kind": kind}))


def ensure_endpoint(settings: Settings) -> Endpoint:
    """Return a reachable endpoint, starting Docker or the local server if needed."""
    if settings.neo4j is not None:
        n = settings.neo4j
        return Endpoint(n.uri, n.user, n.password.get_secret_value(), n.database, "remote")
    server = local_server(settings)
    kind = recorded_server_kind(settings)
    if kind is None:  # a knowledge base with local data stays local even once Docker is installed
        fresh = server.running_pid() is None and not server.data_dir.exists()
        kind = "docker" if fresh and docker_available() else "local"
    if kind == "docker":
        if not docker_available():
            raise ProvisioningError(
                f"knowledge base {settings.kb!r} runs in Docker (recorded in {settings.local.home / _KIND_FILE}) "
                "but no Docker engine answers: start Docker, or delete that file to use a local server")
        info = docker_server(settings).start()
    else:
        info = server.start()
    record_server_kind(settings, kind)
    return Endpoint(info.bolt_uri, info.user, info.password, None, kind, info.browser_url, info.started)
