"""What each model has spent per task, over every job this machine ran: calls, prompt and completion tokens.

``strata load --estimate`` reads it to predict a reply's length from the model's own past replies (their
completion-to-prompt ratio per task) instead of a typical length: completion lengths differ several-fold
between models (a 0.5B model answers an extraction prompt in half the tokens of a larger one), which no fixed
table can know. Sums only, no text: one row per
(model, task) in ``<cache_dir>/llm/usage.sqlite``, updated atomically so concurrent jobs add up.

>>> from pathlib import Path; import tempfile
>>> history = UsageHistory(Path(tempfile.mkdtemp()) / "usage.sqlite")
>>> history.record("m", "atoms_triples", prompt_tokens=900, completion_tokens=300)
>>> history.of("m")["atoms_triples"]
TaskUsage(calls=1, prompt_tokens=900, completion_tokens=300)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kg.shared.response_cache import SqliteConnections

__all__ = ["TaskUsage", "UsageHistory"]


@dataclass(frozen=True)
class TaskUsage:
    """One model's spending on one task, summed over the calls that reported usage."""

    calls: int
    prompt_tokens: int
    completion_tokens: int


class UsageHistory:
    """Per (model, task) sums of the calls an endpoint answered (cache hits are not calls)."""

    def __init__(self, path: Path) -> None:
        self._connections = SqliteConnections(path)
        self._connections().execute(
            "CREATE TABLE IF NOT EXISTS usage (model TEXT NOT NULL, task TEXT NOT NULL, calls INTEGER NOT NULL, "
            "prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, PRIMARY KEY (model, task))"
        )

    @classmethod
    def under(cls, cache_dir: Path) -> UsageHistory:
        return cls(Path(cache_dir) / "llm" / "usage.sqlite")

    def record(self, model: str, task: str, *, prompt_tokens: int, completion_tokens: int) -> None:
        self._connections().execute(
            "INSERT INTO usage VALUES (?, ?, 1, ?, ?) ON CONFLICT (model, task) DO UPDATE SET "
            "calls = calls + 1, prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
            "completion_tokens = completion_tokens + excluded.completion_tokens",
            (model, task, prompt_tokens, completion_tokens),
        )

    def of(self, model: str) -> dict[str, TaskUsage]:
        """``model``'s spending per task (tasks it never answered are absent)."""
        rows = (
            self._connections()
            .execute("SELECT task, calls, prompt_tokens, completion_tokens FROM usage WHERE model = ?", (model,))
            .fetchall()
        )
        return {task: TaskUsage(calls, prompt, completion) for task, calls, prompt, completion in rows}

    def close(self) -> None:
        self._connections.close()
