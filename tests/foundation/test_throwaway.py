"""A throwaway Neo4j never outlives the command that started it: SIGTERM ends the CLI as an exception would
(its server is stopped and its folder removed), and after a SIGKILL the next throwaway server reaps it. A server
that dies under its user is named, with its log, in the error that follows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from kg.errors import Neo4jUnavailable
from kg.provisioning.local import running_pid
from kg.provisioning.throwaway import reap_orphans, throwaway_local_server
from kg.settings import Settings
from kg.shared.processes import alive
from kg.store.neo4j_store import Neo4jGraphStore
from tests.conftest import REPO, jar_cache_dir

# What `strata eval` and `strata bench` do: the CLI's signal handling, then a throwaway server held open.
HOLDER = """
import time
from kg.app.cli import exit_on_termination
from kg.provisioning.throwaway import throwaway_server
from kg.settings import Settings
exit_on_termination()
with throwaway_server(Settings.from_env(), heap="512m", pagecache="128m"):
    print("up", flush=True)
    time.sleep(600)
"""


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_reap_removes_only_folders_whose_owner_is_gone(tmp_path: Path) -> None:
    orphan, owned, unknown = (tmp_path / f"strata-throwaway-{n}" for n in ("orphan", "owned", "unknown"))
    for folder in (orphan, owned, unknown):
        folder.mkdir()
    (orphan / "owner.pid").write_text(str(_dead_pid()))
    (owned / "owner.pid").write_text(str(os.getpid()))
    (orphan / "run").mkdir()
    (orphan / "run" / "neo4j.pid").write_text(str(os.getpid()))  # a live pid that is not a Neo4j: not killed
    assert reap_orphans(tmp_path) == [orphan]
    assert not orphan.exists() and owned.exists() and unknown.exists()


@pytest.mark.neo4j
@pytest.mark.parametrize("kill", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_command_leaves_no_neo4j_behind(kill: signal.Signals, tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "STRATA_CACHE_DIR": str(jar_cache_dir())}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], env=env, cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "up", holder.stderr
        [home] = tmp_path.glob("strata-throwaway-*")
        server = running_pid(home)
        assert server is not None and alive(server)
        holder.send_signal(kill)
        status = holder.wait(timeout=120)
        if kill == signal.SIGTERM:
            assert status == 128 + signal.SIGTERM  # the handler's exit, after the cleanup ran
        else:
            assert home.exists() and alive(server)  # nothing could run: the next throwaway server reaps it
            assert reap_orphans(tmp_path) == [home]
        deadline = time.monotonic() + 30
        while alive(server) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(server) and not home.exists()
    finally:
        if holder.poll() is None:
            holder.kill()


@pytest.mark.neo4j
def test_a_server_that_died_under_its_user_is_named_with_its_log(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    settings = Settings.from_env({"STRATA_HOME": str(tmp_path / "home"), "STRATA_CACHE_DIR": str(jar_cache_dir())})
    with pytest.raises(Neo4jUnavailable) as caught, \
            throwaway_local_server(settings, heap="512m", pagecache="128m") as (_, info):
        assert info.pid is not None
        os.kill(info.pid, signal.SIGKILL)
        while alive(info.pid):
            time.sleep(0.1)
        Neo4jGraphStore.connect(info.bolt_uri, info.user, info.password, retry_s=1.0)
    [note] = caught.value.__notes__
    assert f"(pid {info.pid}) had exited" in note and "Started." in note  # the tail of its neo4j.log
    assert not list(tmp_path.glob("strata-throwaway-*"))
