"""Disjoint sets (union-find with path halving): KG2RAG's spanning forest and PG-RAG's fusion groups."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["DisjointSets"]

T = TypeVar("T", bound=Hashable)


class DisjointSets(Generic[T]):
    """>>> sets = DisjointSets[str]()
    >>> sets.union("a", "b"), sets.union("b", "a"), sets.find("a") == sets.find("b")
    (True, False, True)
    """

    def __init__(self) -> None:
        self._parent: dict[T, T] = {}

    def find(self, x: T) -> T:
        """The representative of ``x``'s set (``x`` joins as a set of its own when new)."""
        parent = self._parent
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: T, b: T) -> bool:
        """Join the sets of ``a`` and ``b``; False when they were one set already."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self._parent[rb] = ra
        return True

    def members(self) -> list[T]:
        """Every element seen, in the order first seen."""
        return list(self._parent)
