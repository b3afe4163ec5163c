"""Tabular knowledge (PIKE-RAG 5.1.2): table rows and typed entity pairs as queryable ``(:Row)`` nodes.

Every row of a loaded table (its ``csv``, header first) becomes ``(:Row {cells: ["col=value"], ...})``
linked to its table (``ROW_OF``) and to the chunk that represents the table (``HAS_ROW``). Each fact
the triples layer extracted from a chunk becomes a relation row too, with columns named after its
entity types (``person=Bob Edwards``, ``relation=host_of``, ``show=Morning Edition``), so typed entity
pairs from plain text can be counted and compared the same way.

Cells whose value parses as a number are also stored as typed properties ``c_<column>`` (column names
normalised to lower-case word characters); the map is written with ``SET r += $props`` and read with
``r[$prop]``, so no column name is ever interpolated into Cypher. :func:`kg.retrieval.tables.aggregate_rows` answers
counting, summing, averaging and ranking questions with one parameterised aggregation.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from typing import Any

from kg.layers.distilled.base import Built, Layer, written
from kg.layers.distilled.models import ChunkRecord
from kg.shared.tabular import cell_property, column_key, parse_number
from kg.shared.text import text_key
from kg.store.queries import CHUNK_FACTS, CHUNK_TABLES

__all__ = ["TablesLayer"]






def _row(row_id: str, chunk: ChunkRecord, table_id: str | None, index: int, kind: str,
         pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    props: dict[str, float] = {}
    for column, value in pairs:
        number = parse_number(value)
        if number is not None:
            props.setdefault(cell_property(column), number)
    return {
        "id": row_id, "chunk_id": chunk.id, "document_id": chunk.document_id, "table_id": table_id,
        "index": index, "kind": kind, "cells": [f"{c}={v}" for c, v in pairs],
        "cell_keys": [f"{column_key(c)}={text_key(v)}" for c, v in pairs],
        "columns": [column_key(c) for c, _ in pairs], "props": props,
    }


class TablesLayer(Layer[Built]):
    name = "tables"
    clear = ("distill/clear_rows",)

    @property
    def method(self) -> str:
        return "rules"

    def build(self, chunks: Sequence[ChunkRecord], *, previous_written: Callable[[], None] = written) -> Built:
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
