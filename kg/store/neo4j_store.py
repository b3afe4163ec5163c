"""The one place Strata talks to Neo4j: named Cypher, routed reads, batched and atomic writes.

Every query comes from ``cypher/<name>.cypher`` through :func:`cypher.load`; values are parameters.
Reads are routed to readers so a cluster works unchanged; writes go to the leader. Driver errors are
wrapped into :mod:`kg.errors`. Transient failures (a leader switch, a restarting server) are retried:
writes by the driver's managed transactions, reads by :meth:`Neo4jGraphStore.query` itself. Reads run as
auto-commit queries on a read session: a managed transaction would add a commit round trip to every
retrieval query (measured on a local server: 1.8 ms against 4.8 ms for ``RETURN 1``).

Example::

    store = Neo4jGraphStore.connect("neo4j://127.0.0.1:7687", "neo4j", password)
    rows = store.read("meta/read")
    store.write_batches("graph/merge_chunks", chunks, batch_size=1000)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, overload

import neo4j
from neo4j import GraphDatabase, NotificationDisabledClassification, RoutingControl
from neo4j import exceptions as neo4j_exc

import cypher
from kg.errors import ConfigError, ConflictError, Neo4jError, Neo4jUnavailable, QueryError
from kg.shared.retrying import retry_call
from kg.store.base import Query, Record, RowT

__all__ = ["Neo4jGraphStore", "Neo4jTransaction", "Record", "retry_budget"]

T = TypeVar("T")
_RETRY_BUDGET: ContextVar[float | None] = ContextVar("strata_retry_budget", default=None)


@contextmanager
def retry_budget(seconds: float) -> Iterator[None]:
    """Within this block (this thread or task, and the threads it hands work to), reads and atomic writes are
    retried through transient faults for at most ``seconds`` instead of the store's ``retry_s``.

    The REST API runs every request in one, so a request made while Neo4j is down answers 503 within
    seconds instead of after the 60 s a batch load may wait for a restarting server.
    """
    token = _RETRY_BUDGET.set(seconds)
    try:
        yield
    finally:
        _RETRY_BUDGET.reset(token)


@contextmanager
def _wrapped(uri: str) -> Iterator[None]:
    try:
        yield
    except neo4j_exc.AuthError as exc:
        raise Neo4jError(f"Neo4j at {uri} refused the credentials: {exc.message}") from exc
    except (neo4j_exc.ServiceUnavailable, neo4j_exc.SessionExpired, OSError) as exc:
        raise Neo4jUnavailable(f"no Neo4j answers at {uri}: {exc}") from exc
    except neo4j_exc.Neo4jError as exc:
        if (exc.code or "") == _CONFLICT:
            raise ConflictError(f"{exc.code}: {exc.message}") from exc
        if (exc.code or "").startswith(_QUERY_ERRORS):
            raise QueryError(f"Neo4j rejected the query: {exc.code}: {exc.message}") from exc
        raise Neo4jError(f"{exc.code}: {exc.message}") from exc
    except neo4j_exc.DriverError as exc:
        raise Neo4jError(str(exc)) from exc


# Errors of one statement (its syntax, its parameters, a procedure it calls): the server itself is fine.
_QUERY_ERRORS = ("Neo.ClientError.Statement.", "Neo.ClientError.Procedure.")
_CONFLICT = "Neo.ClientError.Schema.ConstraintValidationFailed"


def _ensure_database(driver: neo4j.Driver, uri: str, name: str) -> None:
    """A named database (a knowledge base's, or STRATA_NEO4J_DATABASE) exists before first use: created where
    the server holds several (Enterprise, Aura), refused clearly where it holds one (Community)."""
    def system(query: str) -> list[neo4j.Record]:
        return driver.execute_query(cypher.load(query), {"name": name}, database_="system").records

    try:
        if system("meta/database_exists")[0]["exists"]:
            return
    except neo4j_exc.ClientError:
        return  # a user who may not list databases: the first query names a missing one
    edition = str(driver.execute_query(cypher.load("meta/edition"), database_="system").records[0]["edition"])
    if edition != "enterprise":
        raise ConfigError(
            f"Neo4j {edition} at {uri} serves a single database, so it cannot hold database {name!r}: unset "
            "STRATA_NEO4J_URI to give each knowledge base (--kb) a local server of its own, use the default "
            "knowledge base, or point Strata at Neo4j Enterprise or Aura")
    try:
        system("meta/create_database")
    except neo4j_exc.Neo4jError as exc:
        raise ConfigError(f"cannot create database {name!r} at {uri} for this knowledge base: {exc.message}; "
                          "create it yourself or set STRATA_NEO4J_DATABASE to one that exists") from exc


class Neo4jGraphStore:
    """Named-query access to one Neo4j database, with an injected driver: the
    :class:`~kg.store.base.GraphStore` of production."""

    def __init__(self, driver: neo4j.Driver, database: str | None = None, *, uri: str = "",
                 retry_s: float = 60.0) -> None:
        self.driver = driver
        self.database = database
        self.uri = uri
        self.retry_s = retry_s

    @classmethod
    def connect(
        cls, uri: str, user: str, password: str, database: str | None = None, *, retry_s: float = 60.0
    ) -> Neo4jGraphStore:
        """Open a driver and check that the server answers.

        ``retry_s`` bounds how long a transaction is retried through transient faults such as a server
        restart or a leader switch; past it the error is raised as :class:`~kg.errors.Neo4jUnavailable`.
        """
        with _wrapped(uri):
            # "Unknown label/property" notices are expected on an empty graph; keep the rest visible.
            driver = GraphDatabase.driver(
                uri, auth=(user, password), max_transaction_retry_time=retry_s,
                notifications_disabled_classifications=[NotificationDisabledClassification.UNRECOGNIZED],
            )
            try:
                driver.verify_connectivity()
                if database is not None:
                    _ensure_database(driver, uri, database)
                if database is None:
                    # Pin the user's home database once: left unnamed, the driver resolves it again on
                    # every query (measured ~20 ms each on a local server).
                    ping = driver.execute_query(cypher.load("meta/ping"), routing_=RoutingControl.READ)
                    database = ping.summary.database
            except BaseException:
                driver.close()
                raise
        return cls(driver, database, uri=uri, retry_s=retry_s)

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Neo4jGraphStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def server_version(self) -> str:
        with _wrapped(self.uri):
            return str(self.driver.get_server_info().agent)

    @overload
    def read(self, query: Query[RowT], /, **params: Any) -> list[RowT]: ...
    @overload
    def read(self, query: str, /, **params: Any) -> list[Record]: ...

    def read(self, query: str | Query[Any], /, **params: Any) -> list[Any]:
        """Run a named read query, routed to a reader."""
        return self.query(_text(query), routing=RoutingControl.READ, **params)

    @overload
    def write(self, query: Query[RowT], /, **params: Any) -> list[RowT]: ...
    @overload
    def write(self, query: str, /, **params: Any) -> list[Record]: ...

    def write(self, query: str | Query[Any], /, **params: Any) -> list[Any]:
        """Run a named write query in its own transaction."""
        return self.query(_text(query), routing=RoutingControl.WRITE, **params)

    def query(self, text: str, /, *, routing: RoutingControl = RoutingControl.READ, **params: Any) -> list[Record]:
        """Run Cypher text from :mod:`cypher` (a rendered template); prefer :meth:`read`/:meth:`write`."""
        if routing == RoutingControl.READ:
            return self._read(text, params)
        with _wrapped(self.uri):
            records, _, _ = self.driver.execute_query(
                text, parameters_=_unprinted(params), routing_=routing, database_=self.database
            )
        return [_row(record) for record in records]

    def _session(self, access_mode: str) -> neo4j.Session:
        """A session routed by ``access_mode`` that shares the bookmarks of :meth:`query`'s writes: on a
        cluster a read right after a write waits until the member it lands on has that write (causal
        consistency within this store); a single server has nothing to wait for."""
        return self.driver.session(database=self.database, default_access_mode=access_mode,
                                   bookmark_manager=self.driver.execute_query_bookmark_manager)

    def _read(self, text: str, params: dict[str, Any]) -> list[Record]:
        """An auto-commit read on a reader, retried through transient faults (reads are idempotent, so a
        retry cannot apply anything twice)."""
        def attempt() -> list[Record]:
            with self._session(neo4j.READ_ACCESS) as session:
                return [_row(record) for record in session.run(text, _unprinted(params))]

        return self._retrying(attempt)

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, repeated with backoff for up to ``retry_s`` (or a shorter :func:`retry_budget`) while
        it fails with a fault the driver calls retryable, except running out of transaction memory: the same
        work would only fail again, each time after sending all of it (a 100 MB document's replacement took 15
        minutes to fail that way under the driver's own retries, since the limit is hit at commit)."""
        budget = _RETRY_BUDGET.get()
        deadline = time.monotonic() + (self.retry_s if budget is None else min(budget, self.retry_s))

        def wait_after(attempt: int, exc: Exception) -> float:
            if isinstance(exc, neo4j_exc.Neo4jError) and (exc.code or "").endswith("OutOfMemoryError"):
                raise Neo4jError(
                    f"the transaction needs more memory than the server allows ({exc.code}); give Neo4j "
                    "a larger heap (STRATA_NEO4J_HEAP for the local server) or write less at once"
                ) from exc
            delay = min(0.1 * 2.0 ** (attempt - 1), 2.0)
            retryable = isinstance(exc, neo4j_exc.Neo4jError | neo4j_exc.DriverError) and exc.is_retryable()
            if not retryable or time.monotonic() + delay > deadline:
                raise exc
            return delay

        with _wrapped(self.uri):
            return retry_call(attempt, wait_after, (neo4j_exc.Neo4jError, neo4j_exc.DriverError))

    def write_batches(self, name: str, rows: Sequence[Any], /, *, batch_size: int = 1000, **params: Any) -> int:
        """``UNWIND $rows`` in batches, one transaction per batch; returns the rows written."""
        text = cypher.load(name)
        for start in range(0, len(rows), batch_size):
            self.query(text, routing=RoutingControl.WRITE, rows=list(rows[start:start + batch_size]), **params)
        return len(rows)

    def run_statements(self, name: str, /, **params: Any) -> None:
        """Run each ``;``-separated statement of a file (schema files), one at a time."""
        for statement in _statements(cypher.load(name)):
            try:
                self.query(statement, routing=RoutingControl.WRITE, **params)
            except Neo4jError as exc:
                # Two processes installing the schema at once: the other created it first, which is the goal.
                if "AlreadyExists" not in str(exc):  # e.g. EquivalentSchemaRuleAlreadyExists
                    raise

    def run_autocommit(self, name: str, /, **params: Any) -> None:
        """Run a named query in an auto-commit transaction (needed by ``CALL ... IN TRANSACTIONS``)."""
        with _wrapped(self.uri), self._session(neo4j.WRITE_ACCESS) as session:
            session.run(cypher.load(name), _unprinted(params)).consume()

    def atomic(self, work: Callable[[Neo4jTransaction], T], /) -> T:
        """Run ``work`` in one write transaction: all of it is committed, or none.

        The whole transaction is retried through transient faults (see :meth:`_retrying`), so ``work``
        must be idempotent. It is run here rather than by the driver's ``execute_write`` because a
        transaction that outgrew the server's memory must fail at once, and that happens at commit.
        """
        def attempt() -> T:
            with self._session(neo4j.WRITE_ACCESS) as session, session.begin_transaction() as tx:
                result = work(Neo4jTransaction(tx))
                tx.commit()
                return result

        return self._retrying(attempt)


class Neo4jTransaction:
    """Named queries inside one :meth:`Neo4jGraphStore.atomic` unit of work: a
    :class:`~kg.store.base.Transaction`."""

    def __init__(self, tx: neo4j.Transaction) -> None:
        self._tx = tx

    @overload
    def run(self, query: Query[RowT], /, **params: Any) -> list[RowT]: ...
    @overload
    def run(self, query: str, /, **params: Any) -> list[Record]: ...

    def run(self, query: str | Query[Any], /, **params: Any) -> list[Any]:
        return [_row(record) for record in self._tx.run(_text(query), _unprinted(params))]

    def run_template(self, name: str, /, *, label: str, **params: Any) -> list[Record]:
        """A template query with ``{label}`` filled from the allow-list."""
        return [_row(record) for record in self._tx.run(cypher.render(name, label=label), _unprinted(params))]

    def run_batches(self, name: str, rows: Sequence[Any], /, *, batch_size: int = 1000,
                    encode: Callable[[Any], Any] | None = None, **params: Any) -> int:
        """``UNWIND $rows`` in batches inside this transaction; returns the nodes created. ``encode`` turns
        each row into what is sent, one batch at a time."""
        text = cypher.load(name)
        created = 0
        for start in range(0, len(rows), batch_size):
            batch = rows[start:start + batch_size]
            sent = [encode(row) for row in batch] if encode is not None else list(batch)
            summary = self._tx.run(text, _unprinted({"rows": sent, **params})).consume()
            created += summary.counters.nodes_created
        return created


class _Unprinted(list[Any]):
    """A parameter list whose ``repr`` is its length. The driver formats every message's parameters for its debug
    log before it knows whether that log is on (``log.debug(..., " ".join(map(repr, fields)))`` in the Bolt
    protocol's ``run``): for a batch of 1,000 rows with 256-float vectors that was 270 ms and 5 MB of text per
    query, about half the client's CPU during distillation (py-spy, docs/scaling.md). Packing is unchanged: the
    driver packs any ``list``. It also keeps rows of document text out of a debug log someone switches on."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} values>"


def _unprinted(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with each list value wrapped in :class:`_Unprinted`."""
    return {key: _Unprinted(value) if isinstance(value, list) else value for key, value in params.items()}


# Values the driver hands over as they are: rows of these need no conversion.
_PLAIN = frozenset({str, int, float, bool, type(None), bytes})


def _row(record: neo4j.Record) -> Record:
    """A result row as plain Python: what ``record.data()`` gives, without its generic walk over every nested
    value (1.9 ms of the 30 rows a `strata` query reads, against 0.2 ms here: docs/scaling.md)."""
    return {key: _plain(value) for key, value in zip(record.keys(), record.values(), strict=True)}


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list:
        return [_plain(v) for v in value]
    if kind is dict:
        return {k: _plain(v) for k, v in value.items()}
    # A node, relationship, path or temporal value: exported as the driver exports it.
    return neo4j.Record({"value": value}).data()["value"]  # type: ignore[no-untyped-call]  # untyped in the driver


def _text(query: str | Query[Any]) -> str:
    return cypher.load(query) if isinstance(query, str) else query.text


def _statements(text: str) -> list[str]:
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return [part.strip() for part in body.split(";") if part.strip()]
