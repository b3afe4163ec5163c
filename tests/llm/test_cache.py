from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

from kg.llm import ResponseCache, cache_key


def _writer(path: str, worker: int) -> None:
    cache = ResponseCache(Path(path))
    for i in range(50):
        cache.put(cache_key({"worker": worker, "i": i}), f"{worker}-{i}")
        cache.put(cache_key({"shared": i}), f"shared-{i}")  # contended keys
    cache.close()


def test_cache_is_safe_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    cache = ResponseCache(path)
    assert len(cache) == 3 * 50 + 50
    assert cache.get(cache_key({"worker": 2, "i": 49})) == "2-49"
    assert cache.get(cache_key({"shared": 7})) == "shared-7"
    mode = cache._conn().execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    cache.clear()
    assert len(cache) == 0


def test_clients_opening_one_fresh_file_together_all_get_it(tmp_path: Path) -> None:
    # Switching a fresh file to WAL fails at once for some of the clients racing to open it unless retried:
    # three threads on one fresh file failed about one time in 20 before the retry, so 40 files with five
    # clients each would almost surely show it.
    failures: list[BaseException] = []

    def open_and_write(path: Path, worker: int) -> None:
        try:
            cache = ResponseCache(path)
            cache.put(cache_key({"worker": worker}), str(worker))
            cache.close()
        except BaseException as exc:
            failures.append(exc)

    for n in range(40):
        path = tmp_path / str(n) / "c.sqlite"
        clients = [threading.Thread(target=open_and_write, args=(path, w)) for w in range(5)]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        assert failures == []
        cache = ResponseCache(path)
        assert len(cache) == 5
        cache.close()


def test_cache_key_is_canonical() -> None:
    assert cache_key({"a": 1, "b": [1, 2]}) == cache_key({"b": [1, 2], "a": 1})
    assert cache_key({"a": 1}) != cache_key({"a": 2})
