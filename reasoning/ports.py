"""The seams reasoning needs from retrieval and distillation, as small Protocols.

Reasoning never imports a retriever: it receives a :class:`Ports` bundle. :mod:`reasoning.bindings` binds
the ports to :mod:`kg.retrieval`, and the tables port to Cypher over ``(:Row)`` nodes
(:mod:`reasoning.tables`, aggregating with :func:`kg.layers.distilled.aggregate_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from kg.retrieval.base import AtomCandidate, Hit, RetrievalFilter
from reasoning.types import Aggregation

__all__ = ["AtomSearch", "ChunkRetriever", "Filter", "Ports", "RankedRow", "TableAggregator", "TableInfo"]

Filter = Mapping[str, str | float]
"""Cell filters of an aggregation: a string matches the cell's normalised text, a number its typed value."""


@dataclass(frozen=True)
class TableInfo:
    """A table whose rows are Row nodes: its header, where it sits (caption, section and document titles),
    the chunk that represents it (if any) and its rows as ``[(column, value)]`` in row order."""

    table_id: str
    header: list[str]
    chunk: Hit | None = None
    context: str = ""
    rows: list[list[tuple[str, str]]] = field(default_factory=list)


@dataclass(frozen=True)
class RankedRow:
    """One row of a ranking: its cells ``[(column, value)]`` and the value it was ranked by."""

    cells: list[tuple[str, str]]
    value: float


class ChunkRetriever(Protocol):
    """Chunks for a question, best first."""

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]: ...


class AtomSearch(Protocol):
    """Atoms near a query with their chunks (cosine >= threshold), skipping ``exclude_chunk_ids``."""

    def candidates(
        self, query: str, *, k: int, threshold: float, exclude_chunk_ids: list[str]
    ) -> list[AtomCandidate]: ...


class TableAggregator(Protocol):
    """Quantitative questions over tabular knowledge held as Row nodes."""

    def tables(self) -> list[TableInfo]:
        """Every table whose rows are in the graph."""
        ...

    def aggregate(self, table_id: str, column: str, op: str, where: Filter | None = None) -> Aggregation:
        """``op`` (count, sum, avg, min, max) over ``column`` of the rows passing ``where``."""
        ...

    def rank(self, table_id: str, column: str, *, descending: bool, where: Filter | None = None,
             k: int = 1) -> list[RankedRow]:
        """The ``k`` rows with the largest (``descending``) or smallest values of ``column``."""
        ...

    def rows_with(self, column: str, value: str, *, k: int = 20) -> list[tuple[str, list[tuple[str, str]]]]:
        """``(table_id, cells)`` of every table row whose ``column`` holds ``value``."""
        ...


@dataclass(frozen=True)
class Ports:
    """The retrieval methods the reasoning methods use, by role.

    ``flat`` is R (dense chunks), ``hierarchical`` H-R (chunks and atoms), ``hybrid`` the factual route,
    ``kg2rag`` and ``pgrag`` those papers' retrieval, ``atoms`` Algorithm 1's atom search, ``tables`` the
    Row-node aggregations.
    """

    flat: ChunkRetriever
    hierarchical: ChunkRetriever
    hybrid: ChunkRetriever
    kg2rag: ChunkRetriever
    pgrag: ChunkRetriever
    atoms: AtomSearch
    tables: TableAggregator
