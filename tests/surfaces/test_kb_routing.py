"""Knowledge bases side by side: distinct servers or databases per name, and requests routed by name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from kg.app.client import Strata
from kg.app.demo import CORPUS
from kg.app.rest import ApiSettings, KnowledgeBases, KnowledgeService, StrataService, create_app
from kg.settings import Settings


def test_local_knowledge_bases_get_their_own_home_and_ports(tmp_path: Path) -> None:
    env = {"STRATA_HOME": str(tmp_path), "STRATA_CACHE_DIR": str(tmp_path / "cache")}
    default, alpha, beta = (Settings.from_env(env, kb=name) for name in ("default", "alpha", "beta"))
    homes = {s.local.home for s in (default, alpha, beta)}
    ports = [p for s in (default, alpha, beta) for p in (s.local.bolt_port, s.local.http_port)]
    assert len(homes) == 3 and len(set(ports)) == 6
    assert alpha.local.home == tmp_path / "kbs" / "alpha" / "neo4j"
    # A knowledge base keeps its ports: a second reading gives the same server.
    again = Settings.from_env(env, kb="alpha")
    assert (again.local.bolt_port, again.local.http_port) == (alpha.local.bolt_port, alpha.local.http_port)
    assert all(s.neo4j is None for s in (default, alpha, beta))


def test_remote_knowledge_bases_get_their_own_database(tmp_path: Path) -> None:
    env = {"STRATA_HOME": str(tmp_path), "STRATA_NEO4J_URI": "neo4j+s://cluster.example:7687"}
    databases = {name: Settings.from_env(env, kb=name).neo4j.database  # type: ignore[union-attr]
                 for name in ("default", "alpha", "beta")}
    assert databases == {"default": None, "alpha": "alpha", "beta": "beta"}


def test_api_routes_each_request_to_the_named_knowledge_base(make_kb: Callable[[str], Strata]) -> None:
    opened: list[str] = []

    def open_kb(name: str) -> KnowledgeService:
        opened.append(name)
        return StrataService(make_kb(name))

    settings = ApiSettings(default_kb="alpha", allowed_kbs=frozenset({"beta"}))
    with TestClient(create_app(KnowledgeBases(open_kb), settings)) as client:
        loaded = client.post("/documents", params={"kb": "beta"},
                             files=[("files", ("gearbox-history.md", (CORPUS / "gearbox-history.md").read_bytes()))])
        assert loaded.status_code == 200 and "/beta/" in loaded.json()["files"][0]["path"]
        assert client.get("/stats").json()["kb"] == "alpha"
        assert client.get("/stats", params={"kb": "beta"}).json()["kb"] == "beta"
        asked = client.post("/ask", params={"kb": "beta"}, json={"question": "gearbox failures in 2024"})
        assert asked.json()["kb"] == "beta"
        assert client.post("/retrieve", json={"question": "gearbox"}).json()["kb"] == "alpha"
        # One service per name, opened once; other names are refused without opening anything.
        assert opened == ["beta", "alpha"]
        unknown = client.get("/documents", params={"kb": "gamma"})
        assert unknown.status_code == 404 and "'gamma'" in unknown.json()["detail"]
        assert client.get("/documents", params={"kb": "Bad Name!"}).status_code == 400
        assert opened == ["beta", "alpha"]
