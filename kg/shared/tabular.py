"""How tabular knowledge is keyed, the same for the distillation that writes ``(:Row)`` nodes and the
retrieval that aggregates them: column names as property keys, and cell text as numbers."""

from __future__ import annotations

import re

__all__ = ["cell_property", "column_key", "parse_number"]

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_PROP = re.compile(r"^c_\w{1,60}$", re.UNICODE)
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?$", re.IGNORECASE)


def column_key(name: str) -> str:
    """A column name normalised to lower-case word characters joined by ``_`` (at most 60)."""
    key = _NON_WORD.sub("_", name.strip().casefold()).strip("_")[:60]
    return key or "column"


def cell_property(column: str) -> str:
    """The ``(:Row)`` property holding a column's numeric values: ``c_<column key>``."""
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
