"""Process-wide concurrency limits shared by every client that uses the same endpoint settings.

A :class:`ConcurrencyLimit` works from any thread and any event loop (the sync wrapper runs its own loop),
so it is a thread semaphore that async code acquires by polling without blocking its loop.

>>> a = shared_limit("http://x/v1", 2); b = shared_limit("http://x/v1", 2)
>>> a is b
True
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

__all__ = ["ConcurrencyLimit", "shared_limit"]


class ConcurrencyLimit:
    """At most ``limit`` holders at a time, across threads and event loops."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("limit must be >= 1")
        self.limit = limit
        self._sem = threading.BoundedSemaphore(limit)

    @asynccontextmanager
    async def acquire_async(self) -> AsyncIterator[None]:
        delay = 0.001
        while not self._sem.acquire(blocking=False):
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.02)
        try:
            yield
        finally:
            self._sem.release()

    @contextmanager
    def acquire(self) -> Iterator[None]:
        self._sem.acquire()
        try:
            yield
        finally:
            self._sem.release()


_LIMITS: dict[tuple[str, int], ConcurrencyLimit] = {}
_LIMITS_LOCK = threading.Lock()


def shared_limit(endpoint: str, limit: int) -> ConcurrencyLimit:
    """The process-wide limit for ``(endpoint, limit)``, created on first use."""
    key = (endpoint, limit)
    with _LIMITS_LOCK:
        found = _LIMITS.get(key)
        if found is None:
            found = _LIMITS[key] = ConcurrencyLimit(limit)
        return found
