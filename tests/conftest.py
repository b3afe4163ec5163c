"""One real Neo4j for the whole test session, never the user's.

Order: STRATA_TEST_NEO4J_URI (a server handed to the tests, which they wipe); else a throwaway Docker
container when an engine answers; else a throwaway local Neo4j Community 5.26 with its own free ports and
a temporary data folder (the jar cache is shared, it holds no data). STRATA_NEO4J_URI and the user's
local instance are never used. If no server can be had the session fails and says why: no silent skip.

The ``neo4j`` marker means "needs a real Neo4j": every test whose fixtures reach :func:`neo4j_server` gets it
at collection (as ``real_llm`` does every test whose fixtures reach the real local model), and the tests
that start a server another way (a second local server, ``strata neo4j start``, a command that provisions a
throwaway one) carry it explicitly. ``pytest -m "not neo4j"`` is the fast tier: it runs without any server,
and two guards keep it honest. The session server fails loudly when a test without the marker asks for it
(e.g. through ``request.getfixturevalue``), and a test without the marker fails when it starts a Neo4j: it
launched the server's Java entry point or ``docker run|start|up``, a Neo4j of this session's temporary folder
appeared while it ran, or a database folder appeared in its ``tmp_path``.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result

from kg.provisioning import LocalNeo4j
from kg.provisioning.docker import docker_available
from kg.provisioning.local import ENTRY_POINT
from kg.settings import LocalServerSettings, free_port
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def cli_output(result: Result) -> str:
    """A CLI run's output, with the traceback of an exception the command let escape: CliRunner keeps it
    apart, and a failure in CI is otherwise only its message."""
    if result.exc_info is None or isinstance(result.exception, SystemExit):
        return result.output
    return result.output + "\n" + "".join(traceback.format_exception(*result.exc_info))


def jar_cache_dir() -> Path:
    return Path(os.environ.get("STRATA_CACHE_DIR", Path.home() / ".cache" / "strata"))


NEO4J_FIXTURE = "neo4j_server"
REAL_LLM_FIXTURE = "local_llm"  # tests/real_llm/conftest.py: the real local model server
CURRENT_TEST = pytest.StashKey[pytest.Item]()
BASETEMP = pytest.StashKey[Path]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test whose fixture closure holds the session's Neo4j server (``neo4j``) or the real local
    model (``real_llm``), before ``-m`` deselects."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if NEO4J_FIXTURE in fixtures:
            item.add_marker(pytest.mark.neo4j)
        if REAL_LLM_FIXTURE in fixtures:
            item.add_marker(pytest.mark.real_llm)


def needs_neo4j(item: pytest.Item) -> bool:
    return item.get_closest_marker("neo4j") is not None


def session_neo4j_processes(basetemp: Path) -> dict[int, str]:
    """Neo4j processes whose home is under this session's temporary folder: pid -> home. Read from /proc,
    Java processes only (about 2 ms; psutil's full scan costs 15 ms, twice per test); empty without /proc."""
    found: dict[int, str] = {}
    prefix = f"--home-dir={basetemp}"
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if (proc / "comm").read_text().strip() != "java":
                continue
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:  # ended meanwhile, or not ours to read
            continue
        home = next((arg for arg in cmdline if arg.startswith(prefix)), None)
        if ENTRY_POINT in cmdline and home is not None:
            found[int(proc.name)] = home.removeprefix("--home-dir=")
    return found


def session_basetemp(config: pytest.Config) -> Path | None:
    return config.stash.get(BASETEMP, None)


@pytest.fixture(scope="session", autouse=True)
def _record_basetemp(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    request.config.stash[BASETEMP] = tmp_path_factory.getbasetemp()


class ServerLaunches:
    """Commands this process launches that start a Neo4j (the local server's Java entry point, or Docker),
    seen by an audit hook while a test without the ``neo4j`` marker runs."""

    def __init__(self) -> None:
        self.watching = False
        self.seen: list[str] = []
        sys.addaudithook(self.audit)

    def audit(self, event: str, args: tuple[object, ...]) -> None:
        if not self.watching or event != "subprocess.Popen":
            return
        argv = args[1]
        line = " ".join(map(str, argv)) if isinstance(argv, (list, tuple)) else str(argv)
        words = line.split()
        docker_start = bool(words) and Path(words[0]).name == "docker" and bool({"run", "start", "up"} & set(words))
        if ENTRY_POINT in line:
            self.seen.append(next((w for w in words if w.startswith("--home-dir=")), ENTRY_POINT))
        elif docker_start:
            self.seen.append(line[:200])


LAUNCHES = ServerLaunches()


def pytest_runtest_setup(item: pytest.Item) -> None:
    item.config.stash[CURRENT_TEST] = item


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test without the ``neo4j`` marker fails if it started a Neo4j: it launched the server's Java entry
    point or Docker, one of this session's Neo4j processes appeared while it ran, or a Neo4j database folder
    appeared in its ``tmp_path`` (a server a ``strata`` subprocess started and stopped again leaves one)."""
    basetemp = session_basetemp(item.config)
    if needs_neo4j(item) or basetemp is None:
        return (yield)
    before = session_neo4j_processes(basetemp)
    LAUNCHES.watching, LAUNCHES.seen = True, []
    try:
        result = yield
    finally:
        LAUNCHES.watching = False
    started = [f"launched {line}" for line in LAUNCHES.seen]
    started += [f"pid {pid} in {home}" for pid, home in session_neo4j_processes(basetemp).items()
                if pid not in before]
    tmp_path = getattr(item, "funcargs", {}).get("tmp_path")
    if isinstance(tmp_path, Path):
        started += [f"databases in {found.parent.parent}" for found in tmp_path.glob("**/data/databases")]
    if started:
        pytest.fail(f"{item.nodeid} started Neo4j ({'; '.join(started)}) but is not marked neo4j: mark it "
                    "@pytest.mark.neo4j so that the fast tier (-m 'not neo4j') leaves it out", pytrace=False)
    return result


class TestServer:
    __test__ = False

    def __init__(self, uri: str, user: str, password: str, local: LocalNeo4j | None = None) -> None:
        self.uri, self.user, self.password, self.local = uri, user, password, local


@pytest.fixture(scope="session")
def neo4j_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[TestServer]:
    test = request.config.stash.get(CURRENT_TEST, None)
    if test is None or not needs_neo4j(test):
        raise RuntimeError(f"{test.nodeid if test else 'a test'} asked for the Neo4j server without the neo4j "
                           "marker: mark it @pytest.mark.neo4j (the fast tier, -m 'not neo4j', must not need one)")
    uri = os.environ.get("STRATA_TEST_NEO4J_URI")
    if uri:
        yield TestServer(uri, os.environ.get("STRATA_TEST_NEO4J_USER", "neo4j"),
                         os.environ.get("STRATA_TEST_NEO4J_PASSWORD", ""))
        return
    if docker_available():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26-community", password="strata-test-pw") as container:
            yield TestServer(container.get_connection_url(), "neo4j", "strata-test-pw")
        return
    settings = LocalServerSettings(
        home=tmp_path_factory.mktemp("neo4j-test"), cache_dir=jar_cache_dir(),
        bolt_port=free_port(), http_port=free_port(), heap="1g", pagecache="256m",
    )
    server = LocalNeo4j(settings)
    info = server.start()
    try:
        yield TestServer(info.bolt_uri, info.user, info.password, server)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def session_store(neo4j_server: TestServer) -> Iterator[GraphStore]:
    store = Neo4jGraphStore.connect(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    yield store
    store.close()


@pytest.fixture
def store(session_store: GraphStore) -> GraphStore:
    """The test server's database, emptied before the test (tests are isolated from each other)."""
    session_store.run_autocommit("meta/wipe")
    return session_store


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        raise RuntimeError(f"the shared QA samples are missing: expected {SHARED_DATA}")
    return SHARED_DATA
