"""Lookup keys derived from a node's text and stored on it for a keyword full-text index (entities' name block
keys, fact items' fusion keys), given once to the nodes a graph held before they had them.

A graph records on its meta node the version of each kind of key its nodes hold, under the name of the keyword
full-text index that holds them. :func:`ensure_stored_keys` runs before the first lookup: when the recorded
version is not the current one, it pages through the label in id order (bounded memory) and keys the nodes without
keys, or, when an older version keyed them, every node; then it records the version, so later calls cost one read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kg.store.base import GraphStore, Query
from kg.store.queries import KEYS_DONE, KEYS_STATE, CountRow, TextPageRow

__all__ = ["StoredKeys", "ensure_stored_keys"]

_PAGE = 5000


@dataclass(frozen=True)
class StoredKeys:
    """One kind of stored keys: the keyword full-text index that holds them (its name also names the meta node's
    property recording their version), the query that pages through the nodes' texts, the query that writes
    keys (a ``$rows`` of ``{id, keys}``), the current version, and the keys of a text."""

    index: str
    page: Query[TextPageRow]
    write: Query[CountRow]
    version: int
    keys: Callable[[str], Sequence[str]]


def ensure_stored_keys(store: GraphStore, kind: StoredKeys) -> int:
    """Key the nodes that lack ``kind``'s keys, or hold an older version's (see the module docstring); returns
    how many were keyed."""
    state = store.read(KEYS_STATE.render(index=kind.index))
    if not state or state[0]["version"] == kind.version:
        return 0
    stale = state[0]["version"] is not None
    keyed, after = 0, ""
    while page := store.read(kind.page, after=after, limit=_PAGE):
        rows = [{"id": r["id"], "keys": list(kind.keys(r["text"]))} for r in page if stale or r["missing"]]
        if rows:
            store.write(kind.write, rows=rows)
        keyed += len(rows)
        after = page[-1]["id"]
    store.write(KEYS_DONE.render(index=kind.index), version=kind.version)
    return keyed
