"""The graph store seam as types: what Strata needs from a graph database, and typed named queries.

:class:`GraphStore` and :class:`Transaction` are protocols: :class:`~kg.store.neo4j_store.Neo4jGraphStore`
implements them over the official driver, and :class:`kg.testing.FailingStore` wraps any implementation to
inject faults. Code that reads or writes the graph takes a ``GraphStore``, never the Neo4j class.

A :class:`Query` binds the name of a ``cypher/<name>.cypher`` file to the :class:`~typing.TypedDict` of the
rows it returns, so ``store.read(CHUNK_VECTOR, ...)`` is a ``list[ChunkVectorRow]`` and reading a column
the query does not return fails ``mypy``. The handles live in :mod:`kg.store.queries`; a test checks each
file's ``RETURN`` columns against its row type. A plain name (``store.read("meta/ping")``) still works and
gives untyped :data:`Record` rows, for queries whose rows are not read by key.

Example::

    from kg.store.queries import CHUNK_VECTOR

    for row in store.read(CHUNK_VECTOR, vector=v, k=5, candidates=20, threshold=-1.0, **filters):
        print(row["chunk_id"], row["score"])        # row["chunk"] would fail mypy
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, overload

import numpy as np
from neo4j import RoutingControl

import cypher

__all__ = ["GraphStore", "Query", "Record", "RowT", "Transaction", "embedding_listed"]

Record = dict[str, Any]
"""An untyped result row: column name to value, as :meth:`neo4j.Record.data` gives it."""

RowT = TypeVar("RowT", bound=Mapping[str, Any])
T = TypeVar("T")


@dataclass(frozen=True)
class Query(Generic[RowT]):
    """A named Cypher query and the type of its rows.

    ``name`` is the file's name under ``cypher/`` (``"retrieval/chunk_vector"``); ``row`` is the
    ``TypedDict`` whose keys are its ``RETURN`` columns. A template query (one with ``{label}``, ``{rel}``
    or ``{index}``) is filled with :meth:`render`, which keeps the name and the row type.
    """

    name: str
    row: type[RowT]
    rendered: str | None = None

    @property
    def text(self) -> str:
        """The Cypher sent: the rendered template, else the file's text."""
        return self.rendered if self.rendered is not None else cypher.load(self.name)

    def render(self, *, label: str | None = None, rel: str | None = None, index: str | None = None,
               fusion_label: str | None = None) -> Query[RowT]:
        """This template query with its placeholders filled from the allow-lists (see :func:`cypher.render`)."""
        return Query(self.name, self.row,
                     cypher.render(self.name, label=label, rel=rel, index=index, fusion_label=fusion_label))


def query_name(query: str | Query[Any]) -> str:
    """The ``cypher/`` name of a query given by name or by handle."""
    return query if isinstance(query, str) else query.name


class Transaction(Protocol):
    """Named queries inside one :meth:`GraphStore.atomic` unit of work."""

    @overload
    def run(self, query: Query[RowT], /, **params: Any) -> list[RowT]: ...
    @overload
    def run(self, query: str, /, **params: Any) -> list[Record]: ...

    def run_template(self, name: str, /, *, label: str, **params: Any) -> list[Record]:
        """A template query with ``{label}`` filled from the allow-list."""
        ...

    def run_batches(self, name: str, rows: Sequence[Any], /, *, batch_size: int = 1000,
                    encode: Callable[[Any], Any] | None = None, **params: Any) -> int:
        """``UNWIND $rows`` in batches inside this transaction; returns the nodes created."""
        ...


class GraphStore(Protocol):
    """Named-query access to one graph database: routed reads, writes, batched writes, atomic units of work.

    Errors are :mod:`kg.errors` types: :class:`~kg.errors.Neo4jUnavailable` when the server does not answer,
    :class:`~kg.errors.QueryError` for a rejected statement, :class:`~kg.errors.ConflictError` for a
    constraint violation, :class:`~kg.errors.Neo4jError` otherwise.
    """

    @overload
    def read(self, query: Query[RowT], /, **params: Any) -> list[RowT]: ...
    @overload
    def read(self, query: str, /, **params: Any) -> list[Record]: ...

    @overload
    def write(self, query: Query[RowT], /, **params: Any) -> list[RowT]: ...
    @overload
    def write(self, query: str, /, **params: Any) -> list[Record]: ...

    def query(self, text: str, /, *, routing: RoutingControl = RoutingControl.READ, **params: Any) -> list[Record]:
        """Run Cypher text from :mod:`cypher` (a rendered template); prefer :meth:`read`/:meth:`write`."""
        ...

    def write_batches(self, name: str, rows: Sequence[Any], /, *, batch_size: int = 1000, **params: Any) -> int:
        """``UNWIND $rows`` in batches, one transaction per batch; returns the rows written."""
        ...

    def atomic(self, work: Callable[[Transaction], T], /) -> T:
        """Run ``work`` in one write transaction: all of it is committed, or none. ``work`` may be run again
        after a transient fault, so it must be idempotent."""
        ...

    def run_statements(self, name: str, /, **params: Any) -> None:
        """Run each ``;``-separated statement of a file (schema files), one at a time."""
        ...

    def run_autocommit(self, name: str, /, **params: Any) -> None:
        """Run a named query in an auto-commit transaction (needed by ``CALL ... IN TRANSACTIONS``)."""
        ...

    def close(self) -> None:
        """Release the connection; the store is not used afterwards."""
        ...


def embedding_listed(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """``row`` with its numpy ``embedding`` made a list, for ``run_batches(..., encode=embedding_listed)``.

    Rows are built holding float32 arrays (1 KB for 256 dimensions) and their vectors become Python floats
    (about 8 KB) one statement at a time, as the batch is sent: a batch of 2,000 real-text chunks holds about
    75,000 facts. The driver packs an array element by element, about five times slower than a list (measured).
    """
    vector = row.get("embedding")
    return {**row, "embedding": vector.tolist()} if isinstance(vector, np.ndarray) else row
