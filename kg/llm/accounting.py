"""Usage accounting per job and per task: calls, cache hits, tokens, estimated cost, token budget.

>>> acc = Accounting(prices_per_mtok={"m": (1.0, 2.0)})
>>> acc.record("answer", "m", prompt_tokens=1000, completion_tokens=500)
>>> acc.to_json()["cost_usd"]
0.002
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kg.errors import BudgetExceededError

__all__ = ["Accounting", "Usage"]


@dataclass
class Usage:
    """Counters of one scope (a job or a task)."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost_usd, 8),
        }


class Accounting:
    """Thread-safe usage totals of one job, broken down by task, with an optional token budget.

    Pass the same ``Accounting`` to every client of a job; ``to_json()`` returns exactly
    ``{"calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd", "by_task": {task: {...}}}``.

    ``budget_tokens``: before each real call the client calls :meth:`check_budget`; if the tokens used so far
    plus the estimated prompt plus ``max_tokens`` would exceed it, :class:`~kg.errors.BudgetExceededError`.
    """

    def __init__(
        self,
        *,
        prices_per_mtok: Mapping[str, tuple[float, float]] | None = None,
        budget_tokens: int | None = None,
    ) -> None:
        self.prices_per_mtok = dict(prices_per_mtok or {})
        self.budget_tokens = budget_tokens
        self.total = Usage()
        self.by_task: dict[str, Usage] = {}
        self._lock = threading.Lock()

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """Estimated USD cost of a call to ``model`` (0.0 when the model has no price)."""
        price = self.prices_per_mtok.get(model)
        if price is None:
            return 0.0
        return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000

    def record(self, task: str, model: str, *, prompt_tokens: int, completion_tokens: int) -> None:
        """Count one real call and its reported token usage."""
        cost = self.cost(model, prompt_tokens, completion_tokens)
        with self._lock:
            for usage in (self.total, self.by_task.setdefault(task, Usage())):
                usage.calls += 1
                usage.prompt_tokens += prompt_tokens
                usage.completion_tokens += completion_tokens
                usage.cost_usd += cost

    def record_cache_hit(self, task: str) -> None:
        """Count one response served from the cache (no tokens, no cost)."""
        with self._lock:
            self.total.cache_hits += 1
            self.by_task.setdefault(task, Usage()).cache_hits += 1

    def check_budget(self, task: str, estimated_prompt_tokens: int, max_tokens: int) -> None:
        """Raise BudgetExceededError if this call could push the job past ``budget_tokens``."""
        if self.budget_tokens is None:
            return
        with self._lock:
            used = self.total.total_tokens
        needed = used + estimated_prompt_tokens + max_tokens
        if needed > self.budget_tokens:
            raise BudgetExceededError(
                f"task {task!r}: token budget {self.budget_tokens} would be exceeded "
                f"(used {used}, next call up to {estimated_prompt_tokens + max_tokens})"
            )

    def to_json(self) -> dict[str, Any]:
        with self._lock:
            out = self.total.to_json()
            out["by_task"] = {task: usage.to_json() for task, usage in sorted(self.by_task.items())}
        return out
