"""Usage accounting per job and per task: calls, cache hits, tokens, estimated cost, token budget.

Every report that shows LLM usage (load, distill, ask, eval) takes its ``"llm"`` block from
:meth:`Accounting.report` so the shape is the same everywhere:
``{"model", "offline", "response_format", "calls", "cache_hits", "prompt_tokens", "completion_tokens",
"cost_usd", "failed", "repaired", "truncated", "invalid_items", "by_task": {task: {the same counters}}}``.

``failed``: outputs still unusable after the repair round (that chunk or question failed, the job went
on); ``repaired``: outputs that became valid after one repair round; ``truncated``: replies that stopped at
their token limit; ``invalid_items``: list items dropped because they did not validate (the rest was kept).

>>> acc = Accounting(prices_per_mtok={"m": (1.0, 2.0)}, model="m")
>>> acc.record("answer", "m", prompt_tokens=1000, completion_tokens=500)
>>> acc.to_json()["cost_usd"]
0.002
>>> acc.report().summary()
'm: 1 calls, 0 cache hits, 1000 prompt + 500 completion tokens, $0.0020'
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kg.errors import BudgetExceededError

__all__ = ["Accounting", "LLMReport", "UsageCounts"]


class UsageCounts(BaseModel):
    """Frozen counters of one scope, as reported."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    failed: int = 0
    repaired: int = 0
    truncated: int = 0
    invalid_items: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def plus(self, other: UsageCounts, sign: int = 1) -> UsageCounts:
        """These counters with ``other``'s added (``sign=-1``: subtracted)."""
        counts = {name: getattr(self, name) + sign * getattr(other, name) for name in _COUNTERS}
        return UsageCounts(**counts, cost_usd=round(self.cost_usd + sign * other.cost_usd, 8))


_COUNTERS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "failed", "repaired", "truncated",
             "invalid_items")


class LLMReport(UsageCounts):
    """The ``"llm"`` block of every report: the job's model (None offline), the structured-output form the
    endpoint accepted (``response_format``), totals and totals per task."""

    model: str | None = None
    offline: bool = False
    response_format: str | None = None
    by_task: dict[str, UsageCounts] = Field(default_factory=dict)

    def minus(self, before: LLMReport) -> LLMReport:
        """The usage since ``before`` (an earlier report of the same job); tasks with no change drop out."""
        empty = UsageCounts()
        by_task = {task: usage.plus(before.by_task.get(task, empty), -1) for task, usage in self.by_task.items()}
        total = self.plus(before, -1)
        return LLMReport(model=self.model, offline=self.offline, response_format=self.response_format,
                         **total.model_dump(), by_task={t: u for t, u in by_task.items() if u != empty})

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def summary(self) -> str:
        """One line for people, printed at the end of load, ask and eval."""
        who = "offline (no LLM configured)" if self.offline else (self.model or "llm")
        line = (f"{who}: {self.calls} calls, {self.cache_hits} cache hits, {self.prompt_tokens} prompt + "
                f"{self.completion_tokens} completion tokens, ${self.cost_usd:.4f}")
        if self.response_format:
            line += f"; structured output: {self.response_format}"
        problems = [f"{n} {name.replace('_', ' ')}" for name in ("failed", "repaired", "truncated", "invalid_items")
                    if (n := getattr(self, name))]
        return line + (f"; outputs: {', '.join(problems)}" if problems else "")


class Accounting:
    """Thread-safe usage totals of one job, broken down by task, with an optional token budget.

    Pass the same ``Accounting`` to every client of a job; :meth:`report` (or ``to_json()``) gives the
    job's :class:`LLMReport`. ``model`` and ``offline`` describe the job's LLM in reports; the client that
    creates or first receives the accounting fills them in.

    ``budget_tokens``: before each real call the client calls :meth:`reserve` with the call's worst case
    (estimated prompt + ``max_tokens``); the reservation is held until :meth:`record` settles it with the
    reported usage or :meth:`release` drops it, so concurrent calls cannot all pass the same check.
    """

    def __init__(
        self,
        *,
        prices_per_mtok: Mapping[str, tuple[float, float]] | None = None,
        budget_tokens: int | None = None,
        model: str | None = None,
        offline: bool = False,
    ) -> None:
        self.prices_per_mtok = dict(prices_per_mtok or {})
        self.budget_tokens = budget_tokens
        self.model = model
        self.offline = offline
        self.response_format: str | None = None
        # Frozen counters, replaced under the lock: a report never sees a half-counted call.
        self.total = UsageCounts()
        self.by_task: dict[str, UsageCounts] = {}
        self._reserved = 0
        self._lock = threading.Lock()

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """Estimated USD cost of a call to ``model`` (0.0 when the model has no price)."""
        price = self.prices_per_mtok.get(model)
        if price is None:
            return 0.0
        return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000

    def reserve(self, task: str, estimated_prompt_tokens: int, max_tokens: int) -> int:
        """Hold this call's worst case against the budget; returns the tokens held (0 without a budget).

        Raises BudgetExceededError if the tokens used plus those held by calls in flight plus this call's
        worst case would exceed ``budget_tokens``.
        """
        if self.budget_tokens is None:
            return 0
        worst = estimated_prompt_tokens + max_tokens
        with self._lock:
            used, held = self.total.tokens, self._reserved
            if used + held + worst > self.budget_tokens:
                raise BudgetExceededError(
                    f"task {task!r}: token budget {self.budget_tokens} would be exceeded "
                    f"(used {used}, held by calls in flight {held}, next call up to {worst})"
                )
            self._reserved += worst
        return worst

    def release(self, reserved: int) -> None:
        """Drop a reservation whose call failed (nothing was spent)."""
        with self._lock:
            self._reserved -= reserved

    def record(self, task: str, model: str, *, prompt_tokens: int, completion_tokens: int,
               reserved: int = 0) -> None:
        """Count one real call and its reported token usage, settling its reservation in the same step."""
        call = UsageCounts(calls=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                           cost_usd=self.cost(model, prompt_tokens, completion_tokens))
        with self._lock:
            self._reserved -= reserved
            self._add(task, call)

    def record_cache_hit(self, task: str) -> None:
        """Count one response served from the cache (no tokens, no cost)."""
        with self._lock:
            self._add(task, UsageCounts(cache_hits=1))

    def count(self, task: str, *, failed: int = 0, repaired: int = 0, truncated: int = 0,
              invalid_items: int = 0) -> None:
        """Count what happened to one task's outputs (see the module docstring)."""
        with self._lock:
            self._add(task, UsageCounts(failed=failed, repaired=repaired, truncated=truncated,
                                        invalid_items=invalid_items))

    def _add(self, task: str, usage: UsageCounts) -> None:
        self.total = self.total.plus(usage)
        self.by_task[task] = self.by_task.get(task, UsageCounts()).plus(usage)

    def report(self) -> LLMReport:
        """The job's usage so far, as the typed ``"llm"`` block of reports."""
        with self._lock:
            total, by_task = self.total, dict(sorted(self.by_task.items()))
        return LLMReport(model=self.model, offline=self.offline, response_format=self.response_format,
                         by_task=by_task, **total.model_dump())

    def to_json(self) -> dict[str, Any]:
        """``report()`` as JSON data."""
        return self.report().to_json()
