"""The tables port: Cypher over ``(:Row)`` nodes (``cypher/reasoning/*.cypher``) and
:func:`kg.layers.distilled.aggregate_rows`.

Rows carry ``cells`` (``"column=value"``), normalised ``cell_keys`` and typed numeric properties
``c_<column>`` (see :mod:`kg.layers.distilled.tables`); every query here takes those as parameters, so a column
name never becomes Cypher text.
"""

from __future__ import annotations

from typing import Any

from kg.errors import ReasoningError
from kg.retrieval.base import Hit, HitSource
from kg.retrieval.tables import AggregateOp, aggregate_rows
from kg.shared.tabular import column_key
from kg.shared.text import text_key
from kg.store.base import GraphStore
from kg.store.queries import RANK_ROWS, ROWS_WITH_CELL, TABLE_COLUMNS
from reasoning.ports import Filter, RankedRow, TableInfo
from reasoning.types import Aggregation

__all__ = ["GraphTables", "split_cells"]

_OPS: dict[str, AggregateOp] = {"count": "count", "sum": "sum", "avg": "avg", "min": "min", "max": "max"}


def split_cells(cells: list[str] | None) -> list[tuple[str, str]]:
    """``["site=Kestrel Ridge", ...]`` -> ``[("site", "Kestrel Ridge"), ...]``."""
    return [(c.partition("=")[0], c.partition("=")[2]) for c in cells or [] if "=" in c]


def _filter_params(where: Filter | None) -> dict[str, Any]:
    cells: list[str] = []
    numbers: list[dict[str, Any]] = []
    for column, value in (where or {}).items():
        if isinstance(value, str):
            cells.append(f"{column_key(column)}={text_key(value)}")
        else:
            numbers.append({"prop": f"c_{column_key(column)}", "value": float(value)})
    return {"cells": cells, "numbers": numbers}


def _describe(where: Filter | None) -> str | None:
    return ", ".join(f"{c}={v:g}" if isinstance(v, float) else f"{c}={v}" for c, v in where.items()) if where else None


class GraphTables:
    """:class:`reasoning.ports.TableAggregator` over the Row nodes in ``store``."""

    def __init__(self, store: GraphStore, *, limit: int = 200, rows: int = 500) -> None:
        self.store, self.limit, self.max_rows = store, limit, rows

    def tables(self) -> list[TableInfo]:
        found = []
        for r in self.store.read(TABLE_COLUMNS, limit=self.limit, rows=self.max_rows):
            chunk = None if r["chunk_id"] is None else Hit(
                chunk_id=r["chunk_id"], text=r["text"] or "", document_id=r["document_id"], title=r["title"] or "",
                page=r["page"], char_start=int(r["char_start"] or 0), char_end=int(r["char_end"] or 0),
                score=1.0, sources=[HitSource(path="table", score=1.0, via=r["table_id"], via_id=r["table_id"])])
            context = " ".join(str(x) for x in (r["caption"], r["section"], r["document"]) if x)
            found.append(TableInfo(r["table_id"], [str(h) for h in r["header"] or []], chunk, context,
                                   [split_cells(cells) for cells in r["cells"]]))
        return found

    def aggregate(self, table_id: str, column: str, op: str, where: Filter | None = None) -> Aggregation:
        if op not in _OPS:
            raise ReasoningError(f"unknown aggregation {op!r}: use one of {sorted(_OPS)}")
        out = aggregate_rows(self.store, table_id, column, _OPS[op], dict(where or {}))
        value = None if out.value is None else float(out.value)
        return Aggregation(table_id=table_id, column=column, op=op, value=value, rows=out.rows,
                           where=_describe(where))

    def rank(self, table_id: str, column: str, *, descending: bool, where: Filter | None = None,
             k: int = 1) -> list[RankedRow]:
        rows = self.store.read(RANK_ROWS, table_id=table_id, prop=f"c_{column_key(column)}",
                               descending=descending, k=k, **_filter_params(where))
        return [RankedRow(split_cells(r["cells"]), float(r["value"])) for r in rows]

    def rows_with(self, column: str, value: str, *, k: int = 20) -> list[tuple[str, list[tuple[str, str]]]]:
        rows = self.store.read(ROWS_WITH_CELL, cell=f"{column_key(column)}={text_key(value)}", k=k)
        return [(r["table_id"], split_cells(r["cells"])) for r in rows]
