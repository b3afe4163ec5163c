"""Private by default: the local Neo4j's folders and files are closed to other users, and its password is
on no process's command line, not even while the first start sets it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from kg.errors import StrataError
from kg.provisioning import LocalNeo4j
from kg.settings import LocalServerSettings, free_port
from kg.shared.private import owned_dir
from kg.store.neo4j_store import Neo4jGraphStore
from tests.conftest import jar_cache_dir


def command_lines() -> list[bytes]:
    lines = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes())
        except OSError:
            continue
    return lines


@pytest.mark.neo4j
def test_local_server_is_private_and_its_password_never_on_a_command_line(tmp_path: Path) -> None:
    home = tmp_path / "kbs" / "private" / "neo4j"
    server = LocalNeo4j(LocalServerSettings(home=home, cache_dir=jar_cache_dir(), bolt_port=free_port(),
                                            http_port=free_port(), heap="512m", pagecache="128m"))
    password = server.password().encode()
    seen: list[bytes] = []
    done = threading.Event()

    def watch() -> None:  # samples every process's command line while the server is provisioned
        while not done.is_set():
            seen.extend(line for line in command_lines() if password in line)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        info = server.start()
        with Neo4jGraphStore.connect(info.bolt_uri, info.user, info.password) as store:
            assert store.read("meta/ping")
    finally:
        done.set()
        watcher.join()
        server.stop()
    assert seen == []
    assert not (home / "run" / "initial-password.args").exists()
    opened = []
    for root, dirs, files in os.walk(home):
        for name in [*dirs, *files]:
            path = Path(root) / name
            if not path.is_symlink() and path.stat().st_mode & 0o077:
                opened.append((str(path.relative_to(home)), oct(path.stat().st_mode & 0o777)))
    assert opened == []
    assert (home / "data" / "databases").is_dir()  # the walk saw the store itself
    for folder in (home, home.parent):
        assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_a_folder_for_client_files_is_ours_and_closed_and_a_planted_link_is_refused(tmp_path: Path) -> None:
    made = owned_dir(tmp_path / "uploads" / "default", "upload folder")
    assert made.is_dir() and oct(made.stat().st_mode & 0o777) == "0o700"
    open_one = tmp_path / "open"
    open_one.mkdir(mode=0o755)
    open_one.chmod(0o755)
    assert oct(owned_dir(open_one).stat().st_mode & 0o777) == "0o700"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "uploads" / "linked").symlink_to(elsewhere)  # planted where a knowledge base's folder would be
    with pytest.raises(StrataError, match=r"upload folder .*linked is not a folder owned by this user"):
        owned_dir(tmp_path / "uploads" / "linked", "upload folder")
