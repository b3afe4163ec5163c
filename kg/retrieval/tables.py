"""Aggregations over the distilled layer's tabular knowledge (PIKE-RAG 5.1.2): counting, summing, averaging
and ranking questions answered by one parameterised query over ``(:Row)`` nodes (see
:mod:`kg.layers.distilled.tables` for how rows are written)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kg.errors import RetrievalError
from kg.shared.tabular import cell_property, column_key
from kg.shared.text import text_key
from kg.store.base import GraphStore
from kg.store.queries import AGGREGATE_ROWS

__all__ = ["AggregateOp", "RowAggregate", "aggregate_rows"]

AggregateOp = Literal["count", "sum", "avg", "min", "max"]
_OPS: frozenset[str] = frozenset({"count", "sum", "avg", "min", "max"})


@dataclass(frozen=True)
class RowAggregate:
    """The result of :func:`aggregate_rows`: the value asked for and the number of rows it covers."""

    op: str
    column: str
    value: float | int | None
    rows: int

def aggregate_rows(
    store: GraphStore,
    table_id: str | None,
    column: str,
    op: AggregateOp,
    where: Mapping[str, str | int | float] | None = None,
) -> RowAggregate:
    """``op`` over ``column`` of a table's rows (every row when ``table_id`` is None).

    ``where`` filters on cells: a string value matches the cell's normalised text, a number the typed
    property. ``count`` counts rows that have the column; the others use its numeric values.

    Example: ``aggregate_rows(store, None, "show", "count", {"relation": "host_of", "person": "Bob Edwards"})``.
    """
    if op not in _OPS:
        raise RetrievalError(f"unknown aggregation {op!r}: use one of {sorted(_OPS)}")
    cells: list[str] = []
    numbers: list[dict[str, Any]] = []
    for key, value in (where or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            numbers.append({"prop": cell_property(key), "value": float(value)})
        else:
            cells.append(f"{column_key(key)}={text_key(str(value))}")
    record = store.read(AGGREGATE_ROWS, table_id=table_id, prop=cell_property(column),
                        column_key=column_key(column), cells=cells, numbers=numbers)[0]
    result = record["count"] if op == "count" else record[op]
    return RowAggregate(op=op, column=column_key(column), value=result, rows=int(record["count"]))
