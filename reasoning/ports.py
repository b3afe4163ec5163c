"""The seams reasoning needs from retrieval and distillation, as small Protocols.

Reasoning never imports a retriever: it receives a :class:`Ports` bundle. :mod:`reasoning.bindings` binds
the ports to :mod:`kg.retrieval` and :mod:`kg.distill`; :mod:`reasoning.local` holds plain Cypher
implementations over the same graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kg.retrieval.base import AtomCandidate, Hit, RetrievalFilter
from reasoning.types import Aggregation

__all__ = ["AtomSearch", "ChunkRetriever", "Ports", "TableAggregator", "TableInfo"]


@dataclass(frozen=True)
class TableInfo:
    """A table whose rows are Row nodes: its id, header and the chunk that represents it (if any)."""

    table_id: str
    header: list[str]
    chunk: Hit | None = None


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

    def aggregate(
        self, table_id: str, column: str, op: str, where: tuple[str, str] | None = None
    ) -> Aggregation: ...


@dataclass(frozen=True)
class Ports:
    """The retrieval methods the reasoning methods use, by role.

    ``flat`` is R (dense chunks), ``hierarchical`` H-R (chunks and atoms), ``hybrid`` the factual route,
    ``kg2rag`` and ``pgrag`` those papers' retrieval, ``atoms`` Algorithm 1's atom search.
    """

    flat: ChunkRetriever
    hierarchical: ChunkRetriever
    hybrid: ChunkRetriever
    kg2rag: ChunkRetriever
    pgrag: ChunkRetriever
    atoms: AtomSearch
    tables: TableAggregator
