"""Tabular knowledge (PIKE-RAG 5.1.2): table rows and typed entity pairs as queryable ``(:Row)`` nodes.

Every row of a loaded table (its ``csv``, header first) becomes ``(:Row {cells: ["col=value"], ...})``
linked to its table (``ROW_OF``) and to the chunk that represents the table (``HAS_ROW``). Each fact
the triples layer extracted from a chunk becomes a relation row too, with columns named after its
entity types (``person=Bob Edwards``, ``relation=host_of``, ``show=Morning Edition``), so typed entity
pairs from plain text can be counted and compared the same way.

Cells whose value parses as a number are also stored as typed properties ``c_<column>`` (column names
normalised to lower-case word characters); the map is written with ``SET r += $props`` and read with
``r[$prop]``, so no column name is ever interpolated into Cypher. :func:`aggregate_rows` answers
counting, summing, averaging and ranking questions with one parameterised aggregation.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kg.errors import RetrievalError
from kg.layers.distilled.base import Built, Layer
from kg.layers.distilled.models import ChunkRecord
from kg.layers.distilled.text import text_key
from kg.store.base import GraphStore
from kg.store.queries import AGGREGATE_ROWS, CHUNK_FACTS, CHUNK_TABLES

__all__ = ["AggregateOp", "RowAggregate", "TablesLayer", "aggregate_rows", "column_key", "parse_number"]

AggregateOp = Literal["count", "sum", "avg", "min", "max"]
_OPS: frozenset[str] = frozenset({"count", "sum", "avg", "min", "max"})
_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_PROP = re.compile(r"^c_\w{1,60}$", re.UNICODE)
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?$", re.IGNORECASE)


def column_key(name: str) -> str:
    """A column name normalised to lower-case word characters joined by ``_`` (at most 60)."""
    key = _NON_WORD.sub("_", name.strip().casefold()).strip("_")[:60]
    return key or "column"


def _prop(column: str) -> str:
    prop = "c_" + column_key(column)
    if not _PROP.match(prop):  # column_key only yields word characters; this guards the invariant
        raise ValueError(f"column {column!r} does not normalise to a property name")
    return prop


def parse_number(value: str) -> float | None:
    """``"1,234"``, ``"$3.5"``, ``"12%"``, ``"(7)"`` -> 1234.0, 3.5, 12.0, -7.0; None when not a number."""
    text = value.strip().replace(",", "").replace("\u00a0", "").replace(" ", "")
    negative = text.startswith("(") and text.endswith(")")
    text = text.strip("()").lstrip("$€£¥").rstrip("%")
    if not text or not _NUMBER.match(text):
        return None
    number = float(text)
    return -number if negative else number


@dataclass(frozen=True)
class RowAggregate:
    """The result of :func:`aggregate_rows`: the value asked for and the number of rows it covers."""

    op: str
    column: str
    value: float | int | None
    rows: int


def _row(row_id: str, chunk: ChunkRecord, table_id: str | None, index: int, kind: str,
         pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    props: dict[str, float] = {}
    for column, value in pairs:
        number = parse_number(value)
        if number is not None:
            props.setdefault(_prop(column), number)
    return {
        "id": row_id, "chunk_id": chunk.id, "document_id": chunk.document_id, "table_id": table_id,
        "index": index, "kind": kind, "cells": [f"{c}={v}" for c, v in pairs],
        "cell_keys": [f"{column_key(c)}={text_key(v)}" for c, v in pairs],
        "columns": [column_key(c) for c, _ in pairs], "props": props,
    }


class TablesLayer(Layer):
    name = "tables"
    independent_batches = True
    clear = ("distill/clear_rows",)

    @property
    def method(self) -> str:
        return "rules"

    def build(self, chunks: Sequence[ChunkRecord]) -> Built:
        built = Built()
        by_id = {c.id: c for c in chunks}
        ids = list(by_id)
        rows: list[dict[str, Any]] = []
        for t in self.ctx.store.read(CHUNK_TABLES, ids=ids):
            records = list(csv.reader(io.StringIO(t["csv"] or "")))
            header = [h or f"column_{i + 1}" for i, h in enumerate(t["header"] or (records[0] if records else []))]
            for index, record in enumerate(records[1:]):
                pairs = [(header[i] if i < len(header) else f"column_{i + 1}", v.strip())
                         for i, v in enumerate(record) if v.strip()]
                if pairs:
                    rows.append(_row(f"{t['table_id']}:row{index}", by_id[t["chunk_id"]], t["table_id"], index,
                                     "table", pairs))
        relations = 0
        for f in self.ctx.store.read(CHUNK_FACTS, ids=ids):
            head_col = column_key(f["head_type"] or "subject")
            tail_col = column_key(f["tail_type"] or "object")
            if tail_col in (head_col, "relation"):
                tail_col += "_2"
            pairs = [(head_col, f["head"]), ("relation", f["relation"]), (tail_col, f["tail"]),
                     ("subject", f["head"]), ("object", f["tail"])]
            rows.append(_row(f"{f['fact_id']}:row", by_id[f["chunk_id"]], None, relations, "relation", pairs))
            relations += 1
        built.done = ids
        built.rows.append(("distill/create_rows", rows))
        built.counts = {"Row": len(rows), "Row from tables": len(rows) - relations, "Row from facts": relations}
        return built


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
            numbers.append({"prop": _prop(key), "value": float(value)})
        else:
            cells.append(f"{column_key(key)}={text_key(str(value))}")
    record = store.read(AGGREGATE_ROWS, table_id=table_id, prop=_prop(column),
                        column_key=column_key(column), cells=cells, numbers=numbers)[0]
    result = record["count"] if op == "count" else record[op]
    return RowAggregate(op=op, column=column_key(column), value=result, rows=int(record["count"]))
