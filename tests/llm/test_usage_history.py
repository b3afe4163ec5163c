"""The usage history sums what each model spent per task, across threads and clients, and keeps models apart."""

from __future__ import annotations

import threading
from pathlib import Path

from kg.llm.usage_history import TaskUsage, UsageHistory


def test_concurrent_records_add_up_per_model_and_task(tmp_path: Path) -> None:
    path = tmp_path / "llm" / "usage.sqlite"

    def spend(model: str) -> None:
        history = UsageHistory(path)  # a client of its own, as each job has
        for n in range(50):
            history.record(model, "atoms_triples", prompt_tokens=100, completion_tokens=n)
        history.close()

    workers = [threading.Thread(target=spend, args=(m,)) for m in ("small", "small", "large")]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    history = UsageHistory(path)
    assert history.of("small") == {"atoms_triples": TaskUsage(100, 10_000, 2 * sum(range(50)))}
    assert history.of("large") == {"atoms_triples": TaskUsage(50, 5_000, sum(range(50)))}
    assert history.of("unknown") == {}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
