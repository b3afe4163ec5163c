"""Retrying: the one retry loop (:func:`retry_call`, and its coroutine twin), and the policy for an
OpenAI-compatible endpoint (LLM and embeddings): exponential backoff with full jitter, honouring ``Retry-After``.
The graph store drives the same loop with its own deadline (:mod:`kg.store.neo4j_store`).

Retried: HTTP 408, 409, 429 and 5xx, timeouts and dropped connections. Anything else (400, 401, 404, ...)
fails at once (LLMError). After ``max_retries`` retries :class:`~kg.errors.LLMUnavailableError` is raised.

>>> policy = RetryPolicy(max_retries=3, base_backoff_s=0.5, max_backoff_s=8.0)
>>> 0.0 <= policy.backoff(2) <= 2.0
True
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import openai

from kg.errors import LLMError, LLMUnavailableError, StrataError

__all__ = ["RetryPolicy", "parse_retry_after", "retry_async", "retry_call", "retry_call_async", "retry_sync"]

log = logging.getLogger(__name__)
T = TypeVar("T")

_RETRY_STATUSES = {408, 409, 429}
_ERROR_EXCERPT = 300


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), or None."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry. ``max_retries`` retries after the first attempt."""

    max_retries: int = 5
    base_backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 300.0
    # False for a server that serves one request at a time: a timed-out request is still being generated
    # there, and sending it again only queues a second copy behind it.
    retry_timeouts: bool = True

    def backoff(self, attempt: int) -> float:
        """Full-jitter delay before retry number ``attempt`` (1-based)."""
        ceiling = min(self.max_backoff_s, self.base_backoff_s * (2 ** (attempt - 1)))
        return random.uniform(ceiling / 2, ceiling)

    def delay(self, attempt: int, exc: BaseException) -> float:
        """Delay before retry ``attempt`` after ``exc``: at least Retry-After when the server sent one."""
        wait = self.backoff(attempt)
        if isinstance(exc, openai.APIStatusError):
            hinted = parse_retry_after(dict(exc.response.headers))
            if hinted is not None:
                wait = max(min(hinted, self.max_retry_after_s), 0.0)
        return wait


def is_retryable(exc: BaseException) -> bool:
    """True for timeouts, dropped connections, 408/409/429 and 5xx."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _RETRY_STATUSES or exc.status_code >= 500
    return False


def _describe(exc: BaseException) -> str:
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection error"
    return type(exc).__name__


def _give_up(
    what: str, attempts: int, exc: BaseException, exhausted: Callable[[str], StrataError] | None
) -> StrataError:
    message = f"{what}: failed after {attempts} attempt(s), last error: {_describe(exc)}"
    return (exhausted or LLMUnavailableError)(message)


def _wait_or_raise(exc: Exception, attempt: int, policy: RetryPolicy, what: str,
                   wrap: Callable[[str], StrataError] | None,
                   exhausted: Callable[[str], StrataError] | None) -> float:
    """How long to wait before attempt ``attempt + 1``; raises the typed error when ``exc`` is final."""
    if isinstance(exc, openai.APITimeoutError) and not policy.retry_timeouts:
        raise (exhausted or LLMUnavailableError)(
            f"{what}: timed out; not sent again because the server serves one request at a time and may still "
            "be generating it (raise STRATA_LLM_TIMEOUT for a slow server)") from exc
    if not is_retryable(exc):
        # An endpoint's error body can be long, or echo the request: keep what explains the failure.
        raise (wrap or LLMError)(f"{what}: {_describe(exc)}: {str(exc)[:_ERROR_EXCERPT]}") from exc
    if attempt > policy.max_retries:
        raise _give_up(what, attempt, exc, exhausted) from exc
    wait = policy.delay(attempt, exc)
    log.warning("retrying", extra={"what": what, "attempt": attempt, "error": _describe(exc),
                                   "wait_s": round(wait, 3)})
    return wait


def retry_call(call: Callable[[], T], wait_after: Callable[[int, Exception], float],
               catch: type[Exception] | tuple[type[Exception], ...]) -> T:
    """The one retry loop: ``call()`` until it succeeds. After the ``n``-th failure of a ``catch`` type,
    ``wait_after(n, exc)`` either raises (the failure is final) or says how long to sleep first."""
    attempt = 0
    while True:
        try:
            return call()
        except catch as exc:
            attempt += 1
            wait = wait_after(attempt, exc)
        time.sleep(wait)


async def retry_call_async(call: Callable[[], Awaitable[T]], wait_after: Callable[[int, Exception], float],
                           catch: type[Exception] | tuple[type[Exception], ...]) -> T:
    """:func:`retry_call` for a coroutine: the event loop keeps running while it waits."""
    attempt = 0
    while True:
        try:
            return await call()
        except catch as exc:
            attempt += 1
            wait = wait_after(attempt, exc)
        await asyncio.sleep(wait)


def _endpoint_wait(policy: RetryPolicy, what: str, wrap: Callable[[str], StrataError] | None,
                   exhausted: Callable[[str], StrataError] | None) -> Callable[[int, Exception], float]:
    def wait_after(attempt: int, exc: Exception) -> float:
        return _wait_or_raise(exc, attempt, policy, what, wrap, exhausted)
    return wait_after


async def retry_async(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    what: str,
    wrap: Callable[[str], StrataError] | None = None,
    exhausted: Callable[[str], StrataError] | None = None,
) -> T:
    """Await ``call()`` until it succeeds, retrying an endpoint's retryable errors per ``policy``."""
    return await retry_call_async(call, _endpoint_wait(policy, what, wrap, exhausted), openai.OpenAIError)


def retry_sync(
    call: Callable[[], T],
    policy: RetryPolicy,
    *,
    what: str,
    wrap: Callable[[str], StrataError] | None = None,
    exhausted: Callable[[str], StrataError] | None = None,
) -> T:
    """Call ``call()`` until it succeeds, retrying an endpoint's retryable errors per ``policy`` (blocking)."""
    return retry_call(call, _endpoint_wait(policy, what, wrap, exhausted), openai.OpenAIError)
