"""Strata: a graph-database-centric knowledge platform on Neo4j.

Example::

    from kg import Strata

    with Strata.connect() as kb:
        kb.load(["docs/"])
        print(kb.stats().nodes)
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from kg.errors import StrataError
from kg.settings import Settings

if TYPE_CHECKING:
    from kg.app.client import AsyncStrata, DocumentInfo, Stats, Strata

__all__ = ["AsyncStrata", "DocumentInfo", "Settings", "Stats", "Strata", "StrataError"]

# The client pulls in loaders, which themselves use kg.errors: import it on first use, not with kg.
_LAZY = {"AsyncStrata", "DocumentInfo", "Stats", "Strata"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module("kg.app.client"), name)
    raise AttributeError(f"module 'kg' has no attribute {name!r}")
