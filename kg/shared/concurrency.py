"""Process-wide concurrency limits: one per endpoint, shared by its chat and embedding clients.

A :class:`ConcurrencyLimit` works from any thread and any event loop (the sync wrapper runs its own loop),
so it is a lock-guarded counter that threads wait on and async code polls without blocking its loop.
Clients of one endpoint asking for different limits share the smallest: the endpoint's capacity does not
grow because a second client was configured differently. The limit lives while a client holds it.

>>> a = shared_limit("http://x/v1", 4); b = shared_limit("http://x/v1", 2)
>>> a is b, a.limit
(True, 2)
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

__all__ = ["ConcurrencyLimit", "shared_limit"]


class ConcurrencyLimit:
    """At most ``limit`` holders at a time, across threads and event loops; :meth:`lower` shrinks it."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("limit must be >= 1")
        self.limit = limit
        self._held = 0
        self._free = threading.Condition()

    def lower(self, limit: int) -> None:
        """Make the limit at most ``limit`` (holders above it finish; no new one starts until below)."""
        if limit < 1:
            raise ValueError("limit must be >= 1")
        with self._free:
            self.limit = min(self.limit, limit)

    def _try_take(self) -> bool:
        with self._free:
            if self._held >= self.limit:
                return False
            self._held += 1
            return True

    def _give_back(self) -> None:
        with self._free:
            self._held -= 1
            self._free.notify()

    @asynccontextmanager
    async def acquire_async(self) -> AsyncIterator[None]:
        delay = 0.001
        while not self._try_take():
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.02)
        try:
            yield
        finally:
            self._give_back()

    @contextmanager
    def acquire(self) -> Iterator[None]:
        with self._free:
            self._free.wait_for(lambda: self._held < self.limit)
            self._held += 1
        try:
            yield
        finally:
            self._give_back()


_LIMITS: weakref.WeakValueDictionary[str, ConcurrencyLimit] = weakref.WeakValueDictionary()
_LIMITS_LOCK = threading.Lock()


def shared_limit(endpoint: str, limit: int) -> ConcurrencyLimit:
    """The process-wide limit of ``endpoint``: created on first use, lowered to ``limit`` if that is smaller."""
    with _LIMITS_LOCK:
        found = _LIMITS.get(endpoint)
        if found is None:
            found = ConcurrencyLimit(limit)
            _LIMITS[endpoint] = found
        else:
            found.lower(limit)
        return found
