"""Each typed query's row type has exactly the columns its Cypher file returns (no Neo4j needed).

Renaming a column in a ``.cypher`` file fails here; renaming a key in Python fails ``mypy`` at the call
sites that read it (they index the row ``TypedDict`` of :mod:`kg.store.queries`).
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

import pytest

import cypher
from kg.store.base import Query
from kg.store.queries import all_queries

_CLAUSE_END = re.compile(r"(ORDER\s+BY|SKIP|LIMIT|UNION)\b", re.IGNORECASE)
_ALIAS = re.compile(r"\s+AS\s+(`[^`]+`|\w+)\s*$", re.IGNORECASE)


def _mask(text: str) -> str:
    """``text`` with comments removed and every character inside a string or backtick name replaced by
    ``_`` (same length elsewhere), so keywords and brackets are only found in the query itself."""
    out: list[str] = []
    i, quote = 0, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote != "`":
                out.append("__")
                i += 2
                continue
            out.append(ch if ch == quote else "_")
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
            out.append(ch)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _top_level(masked: str) -> list[int]:
    """The nesting depth at each character: 0 outside any bracket."""
    depth, depths = 0, []
    for ch in masked:
        if ch in ")]}":
            depth -= 1
        depths.append(depth)
        if ch in "([{":
            depth += 1
    return depths


def return_columns(text: str) -> list[str]:
    """The column names of the query's final top-level ``RETURN`` clause."""
    masked = _mask(text)  # the same length as ``text``: positions in one are positions in the other
    depth = _top_level(masked)
    starts = [m.end() for m in re.finditer(r"\bRETURN\b", masked, re.IGNORECASE) if depth[m.start()] == 0]
    assert starts, "no top-level RETURN"
    start = starts[-1]
    distinct = re.match(r"\s*DISTINCT\b", masked[start:], re.IGNORECASE)
    start += distinct.end() if distinct else 0
    end = next((m.start() for m in _CLAUSE_END.finditer(masked, start) if depth[m.start()] == 0), len(masked))
    cuts = [start - 1, *(i for i in range(start, end) if masked[i] == "," and depth[i] == 0), end]
    columns = []
    for left, right in pairwise(cuts):
        item, raw = masked[left + 1:right], text[left + 1:right]
        alias = _ALIAS.search(item)
        if alias:
            columns.append(raw[alias.start(1):alias.end(1)].strip("`"))
        else:
            assert re.fullmatch(r"\s*\w+\s*", item), f"RETURN item {raw.strip()!r} has no alias"
            columns.append(item.strip())
    return columns


@pytest.mark.parametrize("query", all_queries(), ids=lambda q: q.name)
def test_row_type_keys_are_the_return_columns(query: Query[Any]) -> None:
    columns = return_columns(cypher.load(query.name))
    assert len(columns) == len(set(columns)), f"{query.name} returns a column twice: {columns}"
    keys = set(query.row.__required_keys__) | set(query.row.__optional_keys__)
    assert set(columns) == keys, (
        f"cypher/{query.name}.cypher returns {sorted(columns)} but {query.row.__name__} has {sorted(keys)}")


def test_every_query_file_a_handle_names_exists() -> None:
    assert len({q.name for q in all_queries()}) == len(all_queries())
    for query in all_queries():
        assert query.text.strip()


@pytest.mark.parametrize(("text", "columns"), [
    ("MATCH (n) RETURN n.id AS id, count(*) AS n ORDER BY id", ["id", "n"]),
    ("CALL (c) { RETURN 1 AS inner } RETURN DISTINCT key, {a: 1, b: [1, 2]} AS `map` LIMIT 3", ["key", "map"]),
    ("// RETURN x AS commented\nRETURN 'RETURN, AS y' AS s, f(a, b) AS g", ["s", "g"]),
])
def test_return_columns_parses_cypher(text: str, columns: list[str]) -> None:
    assert return_columns(text) == columns
