"""Where Strata's Neo4j is: an existing server, a Docker container, or a local server it provisions.

Resolution order (:func:`ensure_endpoint`): ``settings.neo4j`` (STRATA_NEO4J_URI) when set; else Docker
when an engine answers; else a local Neo4j Community 5.26 from Maven Central jars on Java 17.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from kg.server.docker import docker_available, start_docker
from kg.server.local import NEO4J_VERSION, LocalNeo4j, ServerInfo
from kg.settings import Settings

__all__ = ["NEO4J_VERSION", "Endpoint", "LocalNeo4j", "ServerInfo", "ensure_endpoint", "local_server"]


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


def ensure_endpoint(settings: Settings) -> Endpoint:
    """Return a reachable endpoint, starting Docker or the local server if needed."""
    if settings.neo4j is not None:
        n = settings.neo4j
        return Endpoint(n.uri, n.user, n.password.get_secret_value(), n.database, "remote")
    server = local_server(settings)
    if server.running_pid() is None and docker_available():
        info = start_docker(server)
        return Endpoint(info.bolt_uri, info.user, info.password, None, "docker", info.browser_url, True)
    info = server.start()
    return Endpoint(info.bolt_uri, info.user, info.password, None, "local", info.browser_url, info.started)
