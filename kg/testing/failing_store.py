"""A fault-injecting :class:`~kg.store.base.GraphStore`: a real store that fails the queries it is told to.

Tests of recovery (a load interrupted mid-write, a distillation whose write is lost, a retrieval during an
outage) wrap the store they already have instead of patching private functions::

    from kg.errors import Neo4jUnavailable
    from kg.testing import FailingStore

    failing = FailingStore(store, fail_on="distill/create_atoms", times=1,
                           error=Neo4jUnavailable("injected: the server went away"))
    with pytest.raises(Neo4jUnavailable):
        distill(failing, embedder, llm, layers=["atoms"])
    assert failing.failures == 1                  # the first matching query failed, nothing else did
    distill(store, embedder, llm, layers=["atoms"])  # the rerun completes the job

Every call is passed to the wrapped store, except a call whose query matches ``fail_on`` while faults are
left (``times``, ``None`` for every match): it raises ``error`` instead (``after=False``, the query is never
sent), or after the wrapped store ran it (``after=True``: the write happened, its answer was lost). Queries
inside :meth:`~kg.store.base.GraphStore.atomic` are matched too, so a fault there rolls the whole unit back,
as a real one would. ``fail_on`` is a query name (``"graph/delete_documents"``), a
:class:`~kg.store.base.Query` handle (a rendered template matches by its name), or a predicate on the name;
for :meth:`~kg.store.base.GraphStore.query` the name is the Cypher text itself. ``calls`` lists every name
seen, in order, so a test can also assert what was (not) attempted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from neo4j import RoutingControl

from kg.errors import Neo4jUnavailable
from kg.store.base import GraphStore, Query, Record, RowT, Transaction, query_name

__all__ = ["FailingStore"]

T = TypeVar("T")


class FailingStore:
    """A :class:`~kg.store.base.GraphStore` over ``store`` that fails the calls matching ``fail_on``."""

    def __init__(self, store: GraphStore, fail_on: str | Query[Any] | Callable[[str], bool], *,
                 times: int | None = 1, error: BaseException | None = None, after: bool = False) -> None:
        self.store = store
        if isinstance(fail_on, Query):
            fail_on = fail_on.name
        self._matches: Callable[[str], bool] = fail_on if callable(fail_on) else fail_on.__eq__
        self.remaining = times
        self.error = error
        self.after = after
        self.calls: list[str] = []
        self.failures = 0
        self._lock = threading.Lock()

    def _due(self, name: str) -> bool:
        """Record the call; whether it is to fail (and count it as failed if so)."""
        with self._lock:
            self.calls.append(name)
            if not self._matches(name) or self.remaining == 0:
                return False
            if self.remaining is not None:
                self.remaining -= 1
            self.failures += 1
            return True

    def _fault(self, name: str) -> BaseException:
        return self.error if self.error is not None else Neo4jUnavailable(f"injected fault: {name}")

    def _call(self, name: str, run: Callable[[], T]) -> T:
        if not self._due(name):
            return run()
        if self.after:
            run()
        raise self._fault(name)

    # -- GraphStore ------------------------------------------------------------------------------------------

    @overload
    def read(self, query: Query[RowT], /, **params: Any) -> list[RowT]: ...
    @overload
    def read(self, query: str, /, **params: Any) -> list[Record]: ...

    def read(self, query: str | Query[Any], /, **params: Any) -> list[Any]:
        return self._call(query_name(query), lambda: self.store.read(query, **params))

    @overload
    def write(self, query: Query[RowT], /, **params: Any) -> list[RowT]: ...
    @overload
    def write(self, query: str, /, **params: Any) -> list[Record]: ...

    def write(self, query: str | Query[Any], /, **params: Any) -> list[Any]:
        return self._call(query_name(query), lambda: self.store.write(query, **params))

    def query(self, text: str, /, *, routing: RoutingControl = RoutingControl.READ, **params: Any) -> list[Record]:
        return self._call(text, lambda: self.store.query(text, routing=routing, **params))

    def write_batches(self, name: str, rows: Sequence[Any], /, *, batch_size: int = 1000, **params: Any) -> int:
        return self._call(name, lambda: self.store.write_batches(name, rows, batch_size=batch_size, **params))

    def atomic(self, work: Callable[[Transaction], T], /) -> T:
        return self.store.atomic(lambda tx: work(_FailingTransaction(tx, self)))

    def run_statements(self, name: str, /, **params: Any) -> None:
        self._call(name, lambda: self.store.run_statements(name, **params))

    def run_autocommit(self, name: str, /, **params: Any) -> None:
        self._call(name, lambda: self.store.run_autocommit(name, **params))

    def close(self) -> None:
        self.store.close()


class _FailingTransaction:
    """The :class:`~kg.store.base.Transaction` a :class:`FailingStore` hands to an atomic unit of work."""

    def __init__(self, tx: Transaction, owner: FailingStore) -> None:
        self._tx, self._owner = tx, owner

    @overload
    def run(self, query: Query[RowT], /, **params: Any) -> list[RowT]: ...
    @overload
    def run(self, query: str, /, **params: Any) -> list[Record]: ...

    def run(self, query: str | Query[Any], /, **params: Any) -> list[Any]:
        return self._owner._call(query_name(query), lambda: self._tx.run(query, **params))

    def run_template(self, name: str, /, *, label: str, **params: Any) -> list[Record]:
        return self._owner._call(name, lambda: self._tx.run_template(name, label=label, **params))

    def run_batches(self, name: str, rows: Sequence[Any], /, *, batch_size: int = 1000,
                    encode: Callable[[Any], Any] | None = None, **params: Any) -> int:
        return self._owner._call(
            name, lambda: self._tx.run_batches(name, rows, batch_size=batch_size, encode=encode, **params))


def _conforms(store: FailingStore) -> GraphStore:
    return store  # mypy checks here that FailingStore implements the GraphStore protocol
