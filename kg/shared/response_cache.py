"""A persistent response cache: one SQLite file in WAL mode, safe across threads and processes.

>>> from pathlib import Path; import tempfile
>>> cache = ResponseCache(Path(tempfile.mkdtemp()) / "llm.sqlite")
>>> key = cache_key({"model": "m", "messages": []})
>>> cache.put(key, '{"ok": true}'); cache.get(key)
'{"ok": true}'
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kg.shared.private import private_file
from kg.shared.retrying import retry_call

__all__ = ["CACHES", "ResponseCache", "SqliteConnections", "cache_key", "clear_caches"]

# Every persistent cache under the cache folder: name -> (file, table). The clients open theirs from here,
# so `strata cache clear` empties exactly what they read.
CACHES: dict[str, tuple[Path, str]] = {
    "llm": (Path("llm") / "responses.sqlite", "responses"),
    "embeddings": (Path("embeddings.sqlite"), "embeddings"),
}


_BUSY_TIMEOUT_S = 30.0


def cache_key(payload: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of ``payload`` (sorted keys, no whitespace)."""
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class SqliteConnections:
    """One SQLite connection per thread to a private file (0600: prompts and replies quote the documents),
    in WAL mode with a busy timeout, so writers in several threads and processes wait instead of failing.
    Calling it gives the calling thread's connection (autocommit)."""

    def __init__(self, path: Path) -> None:
        self.path = private_file(Path(path))
        self._local = threading.local()
        self._enter_wal_mode()

    def _enter_wal_mode(self) -> None:
        # Switching a new file to WAL while other connections open it can fail with "database is locked" at
        # once, without SQLite's busy handler (seen with three clients opening one fresh file together), so
        # the switch is retried up to the same 30 s a locked write waits.
        deadline = time.monotonic() + _BUSY_TIMEOUT_S

        def wait_after(attempt: int, exc: Exception) -> float:
            pause: float = min(0.005 * 2.0 ** (attempt - 1), 0.25)
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise exc
            return pause

        retry_call(lambda: self().execute("PRAGMA journal_mode=WAL"), wait_after, sqlite3.OperationalError)

    def __call__(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close this thread's connection."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class ResponseCache:
    """Key/value store of response texts (or any str/bytes) in a SQLite file.

    One connection per thread; WAL journal and a busy timeout make concurrent writers from several
    processes wait instead of failing. Values are written with ``INSERT OR REPLACE``, so races are benign.
    """

    def __init__(self, path: Path, *, table: str = "responses") -> None:
        if not table.isidentifier():
            raise ValueError(f"invalid table name {table!r}")
        self.path = Path(path)
        self._table = table
        self._conn = SqliteConnections(self.path)
        self._conn().execute(
            f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, value BLOB NOT NULL, created REAL)"
        )

    def get(self, key: str) -> str | None:
        """The cached text for ``key``, or None."""
        row = self._conn().execute(f"SELECT value FROM {self._table} WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value = row[0]
        return value.decode("utf-8") if isinstance(value, bytes) else str(value)

    def get_bytes(self, key: str) -> bytes | None:
        """The cached bytes for ``key``, or None."""
        row = self._conn().execute(f"SELECT value FROM {self._table} WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value = row[0]
        return value if isinstance(value, bytes) else str(value).encode("utf-8")

    def put(self, key: str, value: str | bytes) -> None:
        """Store ``value`` under ``key`` (replacing any previous value)."""
        self._conn().execute(
            f"INSERT OR REPLACE INTO {self._table} (key, value, created) VALUES (?, ?, ?)",
            (key, value, time.time()),
        )

    def clear(self) -> None:
        """Delete every entry."""
        self._conn().execute(f"DELETE FROM {self._table}")

    def __len__(self) -> int:
        row = self._conn().execute(f"SELECT COUNT(*) FROM {self._table}").fetchone()
        return int(row[0])

    def close(self) -> None:
        """Close this thread's connection (other threads' connections close when they are collected)."""
        self._conn.close()

    @classmethod
    def named(cls, cache_dir: Path, name: str) -> ResponseCache:
        """The cache ``name`` (a key of :data:`CACHES`) under ``cache_dir``."""
        file, table = CACHES[name]
        return cls(Path(cache_dir) / file, table=table)


def clear_caches(cache_dir: Path, names: Sequence[str] = tuple(CACHES)) -> dict[str, int]:
    """Empty the named caches under ``cache_dir``; returns how many entries each held (absent files: 0)."""
    removed: dict[str, int] = {}
    for name in names:
        file, _ = CACHES[name]
        if not (Path(cache_dir) / file).exists():
            removed[name] = 0
            continue
        cache = ResponseCache.named(cache_dir, name)
        try:
            removed[name] = len(cache)
            cache.clear()
        finally:
            cache.close()
    return removed
