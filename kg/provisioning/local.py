"""A Neo4j Community 5.26 server that Strata provisions itself, with no Docker.

Maven resolves the runtime jars from Maven Central into a cache reused across runs
(``<cache_dir>/neo4j-<version>-gds-<gds version>/lib``), with the Graph Data Science library (GDS, the
Maven artifacts of the plugin, on the server's classpath; its ``gds.*`` procedures are unrestricted in
``neo4j.conf``: the ``ppr`` retrieval method runs its PageRank there), and Strata's own procedure
``strata.ppr.stream`` (``plugin/WeightedPageRank.java``, compiled with ``javac`` into the cache once: PageRank
with weighted source nodes on a GDS projection). The cache key names both versions,
so a cache resolved before GDS was added is not reused. Strata writes ``neo4j.conf`` (loopback only), sets
a generated password before the first start, and runs ``org.neo4j.server.CommunityEntryPoint`` on Java 17 in the
background with a pid file. Data lives in ``<home>/data`` and survives stop and start.

Private by default: ``<home>`` and its folders are made 0700 (and made so again at every start, for a home
an earlier version created open), the server and the admin tool run with umask 077 so every file they
create is 0600, and the initial password reaches the admin tool through a 0600 argument file
(``@file``), never on a command line another user could read in ``ps``.

Example::

    server = LocalNeo4j(settings.local)
    info = server.start()          # finds a running server instead of starting another
    print(info.bolt_uri, info.browser_url)
    server.stop()
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import psutil

from kg.errors import MissingToolError, PortInUseError, ProvisioningError, StartTimeoutError
from kg.settings import LocalServerSettings
from kg.shared.private import PRIVATE_UMASK, private_dir
from kg.shared.processes import alive, cmdline, log_tail, port_taken, terminate

__all__ = ["GDS_VERSION", "NEO4J_VERSION", "LocalNeo4j", "ServerInfo", "memory_shortfall", "page_cache_outgrown",
           "page_cached_bytes", "running_pid", "size_bytes", "stop_server"]

log = logging.getLogger(__name__)

NEO4J_VERSION = "5.26.30"
GDS_VERSION = "2.13.9"  # the GDS line built for Neo4j 5.26 (kept in step with pom.xml)
JARS_KEY = f"neo4j-{NEO4J_VERSION}-gds-{GDS_VERSION}"
# The GDS jars that hold its procedures and functions. Neo4j registers procedures only from jars in its plugins
# directory (the classpath is not scanned), so these are copied there at every start; the rest of GDS stays in
# the jar cache on the classpath.
GDS_PROCEDURE_JARS = re.compile(rf"(alpha-)?proc(-[a-z-]+)?-{re.escape(GDS_VERSION)}\.jar")
GDS_PLUGIN_PREFIX = "strata-gds-"  # the copies Strata owns in <home>/plugins (others are left alone)
# Strata's own procedure (strata.ppr.stream: PageRank with weighted source nodes on a GDS projection, which GDS
# 2.13 lacks), compiled once per source and jar cache against the cache's jars; named by a digest of both.
PPR_PLUGIN_SOURCE = "plugin/WeightedPageRank.java"
PPR_PLUGIN_PREFIX = "strata-ppr-"
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
# The JVM flags of the default 5.26 neo4j.conf; the --add-opens are required on Java 17.
JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
)


@dataclass(frozen=True)
class ServerInfo:
    """Where a running server answers, and how to log in."""

    bolt_uri: str
    http_url: str
    user: str
    password: str
    pid: int | None
    home: Path
    started: bool  # False when an already running server was found

    @property
    def browser_url(self) -> str:
        return f"{self.http_url}/browser/"


class LocalNeo4j:
    """Install, start, inspect and stop one local Neo4j Community server."""

    def __init__(self, settings: LocalServerSettings, *, java: str = "java", mvn: str = "mvn",
                 javac: str = "javac") -> None:
        self.settings = settings
        self.java = java
        self.mvn = mvn
        self.javac = javac
        self.home = settings.home
        self.lib_dir = settings.cache_dir / JARS_KEY / "lib"

    # -- paths -------------------------------------------------------------------------------------
    @property
    def conf_dir(self) -> Path:
        return self.home / "conf"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def pid_file(self) -> Path:
        return _pid_file(self.home)

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def console_log(self) -> Path:
        return self.logs_dir / "console.log"

    @property
    def bolt_uri(self) -> str:
        return f"neo4j://127.0.0.1:{self.settings.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://localhost:{self.settings.http_port}"

    # -- installation ------------------------------------------------------------------------------
    def jars_installed(self) -> bool:
        return (self.lib_dir / ".complete").is_file()

    def ensure_jars(self) -> Path:
        """Resolve the server's jars with Maven once; later calls reuse the cache."""
        if self.jars_installed():
            return self.lib_dir
        mvn = shutil.which(self.mvn)
        if mvn is None:
            raise MissingToolError(
                "Maven ('mvn') is needed once to download Neo4j's jars from Maven Central: "
                "install it (Debian/Ubuntu: apt-get install maven), or point Strata at an existing "
                "server with STRATA_NEO4J_URI."
            )
        self._require_java()
        self.lib_dir.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.lib_dir.parent) as tmp:
            pom = Path(tmp) / "pom.xml"
            pom.write_text(resources.files("kg.provisioning").joinpath("pom.xml").read_text("utf-8"), "utf-8")
            staging = Path(tmp) / "lib"
            log.info("resolving Neo4j jars", extra={"version": NEO4J_VERSION, "lib": str(self.lib_dir)})
            proc = subprocess.run(
                [mvn, "-B", "-q", "-f", str(pom), "dependency:copy-dependencies",
                 "-DincludeScope=runtime", f"-DoutputDirectory={staging}"],
                capture_output=True, text=True, check=False,
            )
            if proc.returncode != 0:
                tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
                raise ProvisioningError(
                    f"Maven could not resolve Neo4j {NEO4J_VERSION} with GDS {GDS_VERSION}:\n{tail}")
            (staging / ".complete").write_text(JARS_KEY)
            # A rename makes the cache appear whole or not at all, even if two starts race.
            with contextlib.suppress(OSError):
                staging.rename(self.lib_dir)
        if not self.jars_installed():
            raise ProvisioningError(f"Neo4j jar cache at {self.lib_dir} is incomplete: delete it and retry")
        return self.lib_dir

    def _require_java(self) -> str:
        java = shutil.which(self.java)
        if java is None:
            raise MissingToolError(
                "Java 17 or 21 is needed to run Neo4j 5.26: install it (Debian/Ubuntu: "
                "apt-get install openjdk-17-jre-headless), or point Strata at an existing server "
                "with STRATA_NEO4J_URI."
            )
        return java

    def ppr_plugin(self) -> Path | None:
        """Strata's ``strata.ppr.stream`` procedure as a jar in the jar cache, compiled now with ``javac`` if
        this source and jar cache have none yet; None (with a warning) where there is no ``javac`` (a JRE only):
        ``ppr`` then runs GDS's unweighted PageRank once per seed weight group."""
        source = resources.files("kg.provisioning").joinpath(PPR_PLUGIN_SOURCE).read_bytes()
        digest = hashlib.sha256(source + JARS_KEY.encode()).hexdigest()[:16]
        jar = self.lib_dir.parent / f"{PPR_PLUGIN_PREFIX}{digest}.jar"
        if jar.is_file():
            return jar
        javac = shutil.which(self.javac)
        if javac is None:
            log.warning("no javac: the server starts without Strata's weighted PageRank procedure, and ppr runs "
                        "GDS's PageRank once per seed weight group (slower; install a JDK to have it)")
            return None
        with tempfile.TemporaryDirectory(dir=self.lib_dir.parent) as tmp:
            java_file = Path(tmp) / Path(PPR_PLUGIN_SOURCE).name
            java_file.write_bytes(source)
            classes = Path(tmp) / "classes"
            proc = subprocess.run(
                [javac, "--release", "17", "-nowarn", "-cp", f"{self.lib_dir}/*", "-d", str(classes), str(java_file)],
                capture_output=True, text=True, check=False,
            )
            if proc.returncode != 0:
                raise ProvisioningError(f"javac could not compile {PPR_PLUGIN_SOURCE}:\n{proc.stderr[-2000:]}")
            staging = Path(tmp) / jar.name
            with zipfile.ZipFile(staging, "w", zipfile.ZIP_DEFLATED) as out:
                for path in sorted(classes.rglob("*.class")):
                    out.write(path, path.relative_to(classes).as_posix())
            with contextlib.suppress(OSError):  # another start built it meanwhile
                staging.rename(jar)
        # Builds of an older source are never used again (a server runs its own copy in <home>/plugins).
        for old in jar.parent.glob(PPR_PLUGIN_PREFIX + "*.jar"):
            if old != jar:
                with contextlib.suppress(OSError):
                    old.unlink()
        return jar

    def install_plugins(self) -> list[Path]:
        """Copy GDS's procedure jars from the jar cache into ``<home>/plugins``, with Strata's own procedure
        (:meth:`ppr_plugin`), and drop copies of other versions: Neo4j loads procedures from the plugins
        directory only."""
        plugins = self.home / "plugins"
        private_dir(plugins)
        wanted = {GDS_PLUGIN_PREFIX + jar.name: jar for jar in sorted(self.lib_dir.glob("*.jar"))
                  if GDS_PROCEDURE_JARS.fullmatch(jar.name)}
        own = self.ppr_plugin()
        if own is not None:
            wanted[own.name] = own
        for prefix in (GDS_PLUGIN_PREFIX, PPR_PLUGIN_PREFIX):
            for old in plugins.glob(prefix + "*.jar"):
                if old.name not in wanted:
                    old.unlink()
        installed = []
        for name, jar in wanted.items():
            target = plugins / name
            if not target.is_file() or target.stat().st_size != jar.stat().st_size:
                shutil.copyfile(jar, target)
                target.chmod(0o600)
            installed.append(target)
        return installed

    def make_private(self) -> None:
        """``<home>`` and the server's folders as folders only this user can enter (0700)."""
        for folder in (self.home, self.conf_dir, self.logs_dir, self.data_dir, self.home / "plugins",
                       self.home / "import", self.home / "run"):
            private_dir(folder)

    def password(self) -> str:
        """The configured password, else the one generated for this server (kept in a 0600 file)."""
        if self.settings.password is not None and self.settings.password.get_secret_value():
            return self.settings.password.get_secret_value()
        if self.password_file.is_file():
            return self.password_file.read_text("utf-8").strip()
        private_dir(self.home)
        value = secrets.token_hex(16)  # hex: never starts with "-", which the admin tool reads as an option
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(value + "\n")
        return value

    def conf_text(self) -> str:
        s = self.settings
        return "\n".join(
            [
                "# Written by Strata; regenerated at every start.",
                f"server.directories.data={self.data_dir}",
                f"server.directories.logs={self.logs_dir}",
                f"server.directories.plugins={self.home / 'plugins'}",
                f"server.directories.import={self.home / 'import'}",
                f"server.directories.run={self.home / 'run'}",
                f"server.directories.lib={self.lib_dir}",
                "server.default_listen_address=127.0.0.1",
                "server.default_advertised_address=localhost",
                "server.bolt.enabled=true",
                f"server.bolt.listen_address=127.0.0.1:{s.bolt_port}",
                f"server.bolt.advertised_address=localhost:{s.bolt_port}",
                "server.http.enabled=true",
                f"server.http.listen_address=127.0.0.1:{s.http_port}",
                f"server.http.advertised_address=localhost:{s.http_port}",
                "server.https.enabled=false",
                "dbms.security.auth_enabled=true",
                f"server.memory.heap.initial_size={s.heap}",
                f"server.memory.heap.max_size={s.heap}",
                f"server.memory.pagecache.size={s.pagecache}",
                "dbms.usage_report.enabled=false",
                # GDS reads the graph through internal APIs; its procedures run only when unrestricted
                # (Strata's strata.ppr.stream needs no such right).
                "dbms.security.procedures.unrestricted=gds.*",
                "db.tx_log.rotation.retention_policy=2 days 1G",
                # Bolt's event loops idle this long, twice, before a stop goes on (5 s each by default): every
                # throwaway server of the tests and benchmarks paid 10 s to stop with no connection left open.
                "internal.dbms.bolt.netty_server_shutdown_quiet_period=0",
                # A vector index gains a Lucene segment per write transaction and a search walks every
                # segment's HNSW graph; Neo4j merges them only when this many of a size have piled up.
                *([f"internal.dbms.index.vector.standard_merge_factor={s.vector_merge_factor}"]
                  if s.vector_merge_factor is not None else []),
                "",
            ]
        )

    def write_conf(self) -> Path:
        self.make_private()
        conf = self.conf_dir / "neo4j.conf"
        conf.write_text(self.conf_text(), "utf-8")
        conf.chmod(0o600)
        return conf

    def _env(self) -> dict[str, str]:
        return {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf_dir)}

    def _set_initial_password(self, java: str) -> None:
        if (self.data_dir / "dbms" / "auth.ini").exists() or (self.data_dir / "databases").exists():
            return
        # The password goes through an argument file (picocli's @file) that only this user can read, and is
        # removed at once: a command line is world-readable in /proc while the tool runs.
        arg_file = self.home / "run" / "initial-password.args"
        arg_file.unlink(missing_ok=True)
        fd = os.open(arg_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(self.password() + "\n")
        try:
            proc = subprocess.run(
                [java, "-cp", f"{self.lib_dir}/*", "org.neo4j.cli.AdminTool",
                 "dbms", "set-initial-password", f"@{arg_file}"],
                env=self._env(), capture_output=True, text=True, check=False, umask=PRIVATE_UMASK,
            )
        finally:
            arg_file.unlink(missing_ok=True)
        if proc.returncode != 0:
            raise ProvisioningError(f"setting the initial password failed: {proc.stderr.strip()[-500:]}")

    # -- lifecycle ---------------------------------------------------------------------------------
    def running_pid(self) -> int | None:
        """The pid of this home's server if it runs; a stale pid file is removed."""
        return running_pid(self.home)

    def info(self, pid: int | None, *, started: bool) -> ServerInfo:
        return ServerInfo(self.bolt_uri, self.http_url, "neo4j", self.password(), pid, self.home, started)

    def start(self) -> ServerInfo:
        """Start the server, or return the one already running for this home."""
        pid = self.running_pid()
        if pid is not None:
            self._wait_for_bolt(pid)
            return self.info(pid, started=False)
        java = self._require_java()
        for port in (self.settings.bolt_port, self.settings.http_port):
            if port_taken(port):
                raise PortInUseError(
                    f"port {port} on 127.0.0.1 is taken by another process: stop it, or choose other "
                    "ports with STRATA_NEO4J_BOLT_PORT / STRATA_NEO4J_HTTP_PORT"
                )
        self.ensure_jars()
        stored = page_cached_bytes(self.data_dir / "databases")
        short = memory_shortfall(self.settings.heap, self.settings.pagecache, stored)
        if short:
            log.warning("starting Neo4j in %s: %s; the kernel may kill this or another process (stop servers you "
                        "do not need: strata neo4j stop, or set STRATA_NEO4J_HEAP / STRATA_NEO4J_PAGECACHE)",
                        self.home, short)
        outgrown = page_cache_outgrown(stored, self.settings.pagecache)
        if outgrown:
            log.warning("starting Neo4j in %s: %s; reads across the store (PG-RAG fusion, graph expansion) then go "
                        "to the operating system or the disk: set STRATA_NEO4J_PAGECACHE near the store's size if "
                        "memory allows (docs/scaling.md, Sizing)", self.home, outgrown)
        self.write_conf()
        self.install_plugins()
        self._set_initial_password(java)
        cmd = [
            java, f"-Xms{self.settings.heap}", f"-Xmx{self.settings.heap}", *JVM_FLAGS,
            "-cp", f"{self.home / 'plugins'}/*:{self.conf_dir}/*:{self.lib_dir}/*",
            ENTRY_POINT, f"--home-dir={self.home}", f"--config-dir={self.conf_dir}", "--console-mode",
        ]
        fd = os.open(self.console_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "ab") as out:
            proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self._env(), start_new_session=True, umask=PRIVATE_UMASK,
            )
        self.pid_file.write_text(str(proc.pid))
        try:
            self._wait_for_bolt(proc.pid)
        except BaseException:
            terminate(proc.pid)
            self.pid_file.unlink(missing_ok=True)
            raise
        return self.info(proc.pid, started=True)

    def _wait_for_bolt(self, pid: int) -> None:
        deadline = time.monotonic() + self.settings.start_timeout_s
        while time.monotonic() < deadline:
            if not alive(pid):
                raise StartTimeoutError(f"Neo4j exited during start-up. Log tail:\n{self.log_tail()}")
            if _http_ready(self.settings.http_port) and port_taken(self.settings.bolt_port):
                return
            time.sleep(0.25)
        raise StartTimeoutError(
            f"Neo4j did not answer on Bolt within {self.settings.start_timeout_s:.0f}s. "
            f"Log tail:\n{self.log_tail()}"
        )

    def stop(self, timeout_s: float = 60.0) -> bool:
        """Stop the server cleanly; ``False`` if none was running."""
        return stop_server(self.home, timeout_s)

    def log_tail(self, lines: int = 25) -> str:
        return log_tail([self.logs_dir / "neo4j.log", self.console_log, self.logs_dir / "debug.log"], lines)


_SIZE = re.compile(r"(\d+)\s*([kmgt]?)b?", re.IGNORECASE)
# What the JVM takes beyond the heap and the page cache (code cache, metaspace, threads, Lucene's buffers).
JVM_OVERHEAD_BYTES = 512 * 2**20


def size_bytes(size: str) -> int:
    """A Neo4j memory size (``"3g"``, ``"1536m"``, ``"512k"``, plain bytes) in bytes.

    >>> size_bytes("1536m") == 1536 * 2**20
    True
    """
    match = _SIZE.fullmatch(size.strip())
    if match is None:
        raise ProvisioningError(f"not a memory size: {size!r} (write it as 512m, 2g, ...)")
    return int(match.group(1)) << (10 * "bkmgt".index(match.group(2).lower() or "b"))


def memory_shortfall(heap: str, pagecache: str, stored_bytes: int,
                     available: Callable[[], int] = lambda: int(psutil.virtual_memory().available)) -> str | None:
    """Why a server with this heap and page cache would not fit the memory now free, or None when it fits. The
    page cache counts as far as the store's ``stored_bytes`` fill it: Neo4j takes it as it reads pages (a server
    given 8g held 762 MB on a small store). Every server and local model on the machine holds its share until
    stopped (seven servers and two models exhausted 24 GB here once, and the kernel killed a model
    mid-evaluation)."""
    cached = min(size_bytes(pagecache), stored_bytes)
    needed = size_bytes(heap) + cached + JVM_OVERHEAD_BYTES
    free = available()
    if free >= needed:
        return None
    return (f"it needs about {needed / 2**30:.1f} GiB (heap {heap}, {cached / 2**30:.1f} GiB of its page cache "
            f"{pagecache} that the store fills, JVM) and {free / 2**30:.1f} GiB is available")


# The files Neo4j reads through its page cache: record stores and its own (GBPTree) indexes. Lucene's full-text,
# text and vector indexes are memory-mapped files the operating system caches instead.
_PAGE_CACHED_INDEXES = ("range-", "point-", "token-lookup-")


def page_cached_bytes(databases: Path) -> int:
    """The size of the files under ``databases`` (a server's ``data/databases``) read through the page cache."""
    total = 0
    for db in databases.glob("*"):
        indexes = [i for i in db.glob("schema/index/*") if i.name.startswith(_PAGE_CACHED_INDEXES)]
        files = [*db.glob("neostore*"), *(f for index in indexes for f in index.rglob("*"))]
        total += sum(f.stat().st_size for f in files if f.is_file())
    return total


def page_cache_outgrown(stored_bytes: int, pagecache: str) -> str | None:
    """Why the page cache is smaller than the ``stored_bytes`` it caches (:func:`page_cached_bytes`), or None.
    At a million passages a 1.5 GB page cache held a fifteenth of them and PG-RAG fusion ran 7x slower than with
    8 GB (docs/scaling.md)."""
    if stored_bytes <= size_bytes(pagecache):
        return None
    return f"its store files and native indexes take {stored_bytes / 2**30:.1f} GiB and the page cache is {pagecache}"


def _pid_file(home: Path) -> Path:
    return home / "run" / "neo4j.pid"


def running_pid(home: Path) -> int | None:
    """The pid of the server running from ``home``, if one does; a stale pid file is removed."""
    pid_file = _pid_file(home)
    try:
        pid = int(pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    if _is_our_server(pid, home):
        return pid
    log.info("removing stale pid file", extra={"pid_file": str(pid_file), "pid": pid})
    pid_file.unlink(missing_ok=True)
    return None


def stop_server(home: Path, timeout_s: float = 60.0) -> bool:
    """Stop the server running from ``home`` (whichever process started it); ``False`` if none was running."""
    pid = running_pid(home)
    if pid is None:
        return False
    terminate(pid, timeout_s)
    _pid_file(home).unlink(missing_ok=True)
    return True


def _is_our_server(pid: int, home: Path) -> bool:
    if not alive(pid):
        return False
    args = cmdline(pid)
    if args is None:
        return True  # no /proc (macOS): trust a live pid
    return f"--home-dir={home}".encode() in args and ENTRY_POINT.encode() in args


def _http_ready(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.sendall(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
            return sock.recv(12).startswith(b"HTTP/1.")
    except OSError:
        return False
