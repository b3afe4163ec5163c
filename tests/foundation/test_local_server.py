"""The local Neo4j provisioning, on a real second server with its own ports and data."""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import socket
import threading
import urllib.request
import zipfile
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest
from neo4j import RoutingControl
from pydantic import SecretStr

from kg.errors import (
    ConfigError,
    MissingToolError,
    Neo4jUnavailable,
    PortInUseError,
    ProvisioningError,
    StartTimeoutError,
)
from kg.provisioning import LocalNeo4j
from kg.provisioning.local import memory_shortfall, page_cache_outgrown, page_cached_bytes, size_bytes
from kg.settings import LocalServerSettings, Settings, free_port
from kg.store.neo4j_store import Neo4jGraphStore
from tests.conftest import jar_cache_dir


def make_server(home: Path, **overrides: object) -> LocalNeo4j:
    fields: dict[str, object] = {
        "home": home, "cache_dir": jar_cache_dir(), "bolt_port": free_port(), "http_port": free_port(),
        "heap": "512m", "pagecache": "128m",
    }
    fields.update(overrides)
    return LocalNeo4j(LocalServerSettings.model_validate(fields))


def _websocket_upgrade(port: int) -> str:
    key = base64.b64encode(os.urandom(16)).decode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"GET / HTTP/1.1\r\nHost: localhost:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        return sock.recv(200).decode("latin-1")


def test_conf_is_loopback_only_with_auth_and_our_ports(tmp_path: Path) -> None:
    server = make_server(tmp_path, bolt_port=17001, http_port=17002)
    conf = server.write_conf().read_text()
    assert "server.default_listen_address=127.0.0.1" in conf
    assert "server.bolt.listen_address=127.0.0.1:17001" in conf
    assert "server.http.listen_address=127.0.0.1:17002" in conf
    assert "dbms.security.auth_enabled=true" in conf
    assert f"server.directories.data={tmp_path / 'data'}" in conf
    assert "0.0.0.0" not in conf


def test_another_server_keeps_the_server_settings_but_not_the_home_ports_memory_or_password(tmp_path: Path) -> None:
    kb = Settings.from_env({"STRATA_HOME": str(tmp_path), "STRATA_NEO4J_VECTOR_MERGE": "10",
                            "STRATA_NEO4J_LOCAL_PASSWORD": "kb-secret-0123"}).local
    bench = kb.another_server(tmp_path / "bench", bolt_port=17011, http_port=17012, heap="3g", pagecache="2g")
    assert (bench.home, bench.bolt_port, bench.http_port, bench.heap, bench.pagecache) == (
        tmp_path / "bench", 17011, 17012, "3g", "2g")
    assert kb.password is not None and bench.password is None  # it generates its own in its home
    assert (bench.vector_merge_factor, bench.cache_dir, bench.start_timeout_s) == (
        10, kb.cache_dir, kb.start_timeout_s)
    assert kb.another_server(tmp_path, bolt_port=1, http_port=2, start_timeout_s=900).start_timeout_s == 900
    same_memory = kb.another_server(tmp_path, bolt_port=1, http_port=2)
    assert (same_memory.heap, same_memory.pagecache) == (kb.heap, kb.pagecache)


@pytest.mark.neo4j
def test_vector_merge_factor_reaches_the_server_only_when_set(tmp_path: Path) -> None:
    """Neo4j merges a vector index's segments only when 50 of a size have piled up, and every search walks
    each segment (docs/scaling.md); STRATA_NEO4J_VECTOR_MERGE lowers that on the local server."""
    setting = "internal.dbms.index.vector.standard_merge_factor"
    assert setting not in make_server(tmp_path / "default").conf_text()
    assert Settings.from_env({"STRATA_HOME": str(tmp_path)}).local.vector_merge_factor is None
    with pytest.raises(ConfigError, match="STRATA_NEO4J_VECTOR_MERGE='1': must be at least 2"):
        Settings.from_env({"STRATA_HOME": str(tmp_path), "STRATA_NEO4J_VECTOR_MERGE": "1"})
    tuned = Settings.from_env({"STRATA_HOME": str(tmp_path), "STRATA_NEO4J_VECTOR_MERGE": "10"})
    server = make_server(tmp_path / "tuned", vector_merge_factor=tuned.local.vector_merge_factor)
    server.start()  # Neo4j refuses to start on a setting it does not know
    try:
        # SHOW SETTINGS leaves internal settings out; the server's log lists the configuration it runs with.
        assert f"{setting}=10" in (server.logs_dir / "debug.log").read_text("utf-8")
    finally:
        server.stop()


def test_generated_password_is_private_and_stable(tmp_path: Path) -> None:
    server = make_server(tmp_path)
    first = server.password()
    assert len(first) >= 16
    assert oct(server.password_file.stat().st_mode & 0o777) == "0o600"
    assert make_server(tmp_path).password() == first
    chosen = make_server(tmp_path, password=SecretStr("user-chosen-pw"))
    assert chosen.password() == "user-chosen-pw"


def test_missing_java_says_what_to_install(tmp_path: Path) -> None:
    server = LocalNeo4j(make_server(tmp_path).settings, java="java-not-installed-here")
    with pytest.raises(MissingToolError, match="Java 17"):
        server.start()
    assert not server.pid_file.exists()


def test_missing_maven_says_what_to_install(tmp_path: Path) -> None:
    settings = make_server(tmp_path).settings.model_copy(update={"cache_dir": tmp_path / "empty-cache"})
    server = LocalNeo4j(settings, mvn="mvn-not-installed-here")
    with pytest.raises(MissingToolError, match="Maven"):
        server.ensure_jars()


def test_strata_ppr_procedure_is_compiled_once_and_installed_as_a_plugin(tmp_path: Path) -> None:
    """strata.ppr.stream's jar is built from the packaged source against the jar cache, reused by later starts,
    and copied into the plugins folder in place of a copy of another version."""
    server = make_server(tmp_path)
    server.ensure_jars()
    jar = server.ppr_plugin()
    assert jar is not None and jar.parent == server.lib_dir.parent
    with zipfile.ZipFile(jar) as archive:
        assert "strata/ppr/WeightedPageRank.class" in archive.namelist()
    assert server.ppr_plugin() == jar
    stale = tmp_path / "plugins" / "strata-ppr-0000000000000000.jar"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"an older build")
    installed = server.install_plugins()
    assert tmp_path / "plugins" / jar.name in installed and not stale.exists()
    # A build for an older source left in the jar cache goes when this source's jar is built.
    old_build = jar.parent / "strata-ppr-0000000000000000.jar"
    old_build.write_bytes(b"an older build")
    jar.unlink()
    assert server.ppr_plugin() == jar and jar.is_file() and not old_build.exists()


def test_without_javac_the_server_has_no_strata_procedure_and_says_so(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    settings = make_server(tmp_path).settings.model_copy(update={"cache_dir": tmp_path / "cache"})
    server = LocalNeo4j(settings, javac="javac-not-installed-here")
    with caplog.at_level(logging.WARNING, logger="kg.provisioning.local"):
        assert server.ppr_plugin() is None
    assert "no javac" in caplog.text


def test_port_taken_is_reported(tmp_path: Path) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        server = make_server(tmp_path, bolt_port=taken)
        with pytest.raises(PortInUseError, match=str(taken)):
            server.start()
    assert not server.pid_file.exists()


@pytest.mark.neo4j
def test_start_again_status_stop_and_stale_pid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               caplog: pytest.LogCaptureFixture) -> None:
    server = make_server(tmp_path)
    info = server.start()
    try:
        assert info.started
        with urllib.request.urlopen(info.browser_url, timeout=10) as response:
            assert response.status == 200
        # The Browser learns the Bolt address from HTTP discovery, then speaks Bolt over WebSocket.
        with urllib.request.urlopen(info.http_url, timeout=10) as response:
            discovery = json.loads(response.read())
        assert discovery["bolt_direct"] == f"bolt://localhost:{server.settings.bolt_port}"
        assert _websocket_upgrade(server.settings.bolt_port).startswith("HTTP/1.1 101")
        again = make_server(tmp_path, bolt_port=server.settings.bolt_port,
                            http_port=server.settings.http_port).start()
        assert not again.started
        assert again.pid == info.pid
        with Neo4jGraphStore.connect(info.bolt_uri, info.user, info.password) as store:
            assert store.server_version().startswith("Neo4j/5.26")
            store.query("CREATE (:Probe {id: 'kept'})", routing=RoutingControl.WRITE)
    finally:
        assert server.stop()
    assert server.running_pid() is None
    assert not server.stop()

    # A pid file left by a crash names a process that is gone (or is not Neo4j): it is cleaned up.
    server.pid_file.write_text(str(os.getpid()))
    assert server.running_pid() is None
    assert not server.pid_file.exists()

    # Data persists across stop and start; a start that would not fit the free memory says so, and starts.
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(available=300 * 2**20))
    with caplog.at_level(logging.WARNING, logger="kg.provisioning.local"):
        info = server.start()
    assert re.search(r"needs about 1\.\d GiB \(heap 512m, 0\.\d GiB of its page cache 128m that the store fills, "
                     r"JVM\) and 0\.3 GiB is available", caplog.text)
    try:
        with Neo4jGraphStore.connect(info.bolt_uri, info.user, info.password) as store:
            rows = store.query("MATCH (p:Probe) RETURN p.id AS id")
            assert rows == [{"id": "kept"}]
    finally:
        server.stop()



@pytest.mark.neo4j
def test_writes_survive_a_server_restart(tmp_path: Path) -> None:
    """A write issued while Neo4j restarts is retried by the managed transaction, not lost or swallowed."""
    server = make_server(tmp_path)
    info = server.start()
    try:
        with Neo4jGraphStore.connect(info.bolt_uri, info.user, info.password, retry_s=120) as store:
            store.query("CREATE (:Probe {id: 'before'})", routing=RoutingControl.WRITE)
            server.stop()
            restarter = threading.Timer(1.0, server.start)
            restarter.start()
            store.query("CREATE (:Probe {id: 'during'})", routing=RoutingControl.WRITE)
            restarter.join()
            ids = {r["id"] for r in store.query("MATCH (p:Probe) RETURN p.id AS id")}
        assert ids == {"before", "during"}
    finally:
        server.stop()


def test_unreachable_server_is_reported_not_swallowed(tmp_path: Path) -> None:
    with pytest.raises(Neo4jUnavailable, match="no Neo4j answers"):
        Neo4jGraphStore.connect(f"neo4j://127.0.0.1:{free_port()}", "neo4j", "x", retry_s=1)


@pytest.mark.neo4j
def test_start_timeout_reports_the_log_and_leaves_nothing_running(tmp_path: Path) -> None:
    server = make_server(tmp_path, start_timeout_s=0.5)
    with pytest.raises(StartTimeoutError, match="Log tail") as caught:
        server.start()
    assert str(server.console_log) in str(caught.value)
    assert server.running_pid() is None and not server.pid_file.exists()


def test_memory_sizes_and_the_shortfall_of_a_start() -> None:
    assert [size_bytes(x) for x in ("512m", "2g", "64k", "1024", "1G")] == [
        512 * 2**20, 2 * 2**30, 64 * 2**10, 1024, 2**30]
    with pytest.raises(ProvisioningError, match="not a memory size: 'lots'"):
        size_bytes("lots")
    assert memory_shortfall("1g", "512m", 2**30, available=lambda: 3 * 2**30) is None
    assert memory_shortfall("1g", "512m", 2**30, available=lambda: 2**30) == (
        "it needs about 2.0 GiB (heap 1g, 0.5 GiB of its page cache 512m that the store fills, JVM) and 1.0 GiB "
        "is available")
    # An empty store takes none of a large page cache yet; a store of 1 GiB takes 1 GiB of it.
    assert memory_shortfall("1g", "8g", 0, available=lambda: 2**31) is None
    assert memory_shortfall("1g", "8g", 2**30, available=lambda: 2**31) == (
        "it needs about 2.5 GiB (heap 1g, 1.0 GiB of its page cache 8g that the store fills, JVM) and 2.0 GiB "
        "is available")


def test_a_store_that_outgrew_its_page_cache_is_named(tmp_path: Path) -> None:
    """Record stores and native indexes count; Lucene's indexes (cached by the OS) and other files do not."""
    db = tmp_path / "databases" / "neo4j"
    sizes = {"neostore.nodestore.db": 300, "neostore.propertystore.db.arrays": 500,
             "schema/index/range-1.0/7/index-7": 300, "schema/index/vector-2.0/9/segment": 5000,
             "schema/index/fulltext-1.0/3/segment": 5000, "transactions.log": 5000}
    for name, mib in sizes.items():
        (db / name).parent.mkdir(parents=True, exist_ok=True)
        with open(db / name, "wb") as f:
            f.truncate(mib * 2**20)  # sparse: sizes without the disk
    stored = page_cached_bytes(tmp_path / "databases")
    assert stored == 1100 * 2**20
    assert page_cache_outgrown(stored, "2g") is None
    assert page_cache_outgrown(stored, "1g") == (
        "its store files and native indexes take 1.1 GiB and the page cache is 1g")
    assert page_cached_bytes(tmp_path / "nothing") == 0
