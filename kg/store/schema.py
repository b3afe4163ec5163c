"""Schema bootstrap: constraints, full-text and vector indexes, and the embedder recorded in the graph.

:func:`ensure_schema` is idempotent and runs on ``strata init`` and on the first load. The embedder's
name and dimension are stored on the ``(:StrataMeta {id: 'strata'})`` node; opening a graph built with
another embedder fails with :class:`~kg.errors.EmbeddingMismatchError` naming both.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from neo4j import RoutingControl

import cypher
from kg.errors import ConfigError, EmbeddingMismatchError
from kg.store.base import GraphStore
from kg.store.queries import (
    COUNT_EMBEDDED,
    FULLTEXT_ANALYZERS,
    FULLTEXT_INDEX_ANALYZERS,
    META_READ,
    META_VECTOR_INDEXES,
)

__all__ = ["ANALYZED_INDEXES", "DEFAULT_ANALYZER", "SCHEMA_VERSION", "SchemaStatus", "check_embedder", "ensure_schema",
           "schema_status"]

SCHEMA_VERSION = 1
WRITE = RoutingControl.WRITE
DEFAULT_ANALYZER = "standard-no-stop-words"
# The full-text indexes over the corpus's own language; the others hold names and keys (fulltext.cypher).
ANALYZED_INDEXES = ("chunk_text", "atom_text")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SchemaStatus:
    installed: bool
    version: int | None
    embedder: str | None
    dimensions: int | None


def schema_status(store: GraphStore) -> SchemaStatus:
    rows = store.read(META_READ)
    if not rows:
        return SchemaStatus(False, None, None, None)
    row = rows[0]
    return SchemaStatus(row["schema_version"] == SCHEMA_VERSION, row["schema_version"],
                        row["embedder"], row["dimensions"])


def check_embedder(store: GraphStore, embedder: str, dimensions: int) -> SchemaStatus:
    """Fail if the graph records another embedder or dimension than the configured one."""
    status = schema_status(store)
    if status.dimensions is not None and (status.dimensions != dimensions or status.embedder != embedder):
        raise EmbeddingMismatchError(
            f"this graph was built with embedder {status.embedder!r} ({status.dimensions} dimensions) "
            f"but Strata is configured with {embedder!r} ({dimensions} dimensions): configure the "
            "same embedder, or load into another knowledge base (--kb)"
        )
    return status


def _reconcile_vector_indexes(store: GraphStore, embedder: str, dimensions: int) -> None:
    """Recreate a vector index of another dimension when no node of its label holds a vector of that other
    dimension (an emptied graph switching embedder); refuse when such vectors exist, since they would be mixed.

    Vectors of the configured dimension do not count: another process switching the same emptied graph may
    have recreated the index and written them since this one listed the indexes (two loads at once)."""
    for row in store.read(META_VECTOR_INDEXES):
        label = row["label"]
        if row["dimensions"] in (None, dimensions) or label not in cypher.LABELS:
            continue
        embedded = store.read(COUNT_EMBEDDED.render(label=label), dimensions=dimensions)[0]["embedded"]
        if embedded:
            raise EmbeddingMismatchError(
                f"vector index {row['name']} holds {embedded} vectors of {row['dimensions']} dimensions "
                f"but Strata is configured with {embedder!r} ({dimensions} dimensions)"
            )
        store.query(cypher.render("meta/drop_index", index=row["name"]), routing=WRITE)


def _reconcile_analyzer(store: GraphStore, analyzer: str) -> None:
    """Drop the language indexes built with another analyzer than ``analyzer``, for ensure_schema to create
    them again with it (Lucene then re-populates them from the stored nodes); refuse an analyzer the server
    does not offer."""
    offered = sorted(r["name"] for r in store.read(FULLTEXT_ANALYZERS))
    if analyzer not in offered:
        raise ConfigError(f"full-text analyzer {analyzer!r} (STRATA_FULLTEXT_ANALYZER) is not one this Neo4j "
                          f"offers: {', '.join(offered)}")
    for row in store.read(FULLTEXT_INDEX_ANALYZERS, names=list(ANALYZED_INDEXES)):
        if row["analyzer"] != analyzer:
            log.warning("rebuilding a full-text index with another analyzer",
                        extra={"index": row["name"], "analyzer": analyzer, "was": row["analyzer"]})
            store.query(cypher.render("meta/drop_index", index=row["name"]), routing=WRITE)


def ensure_schema(store: GraphStore, embedder: str, dimensions: int, *, analyzer: str | None = None,
                  timeout_s: int = 300) -> SchemaStatus:
    """Create every constraint and index if missing, and record the embedder; safe to repeat.

    ``analyzer`` is the Lucene analyzer of the full-text indexes over the corpus's language (``english``
    stems, ``cjk`` indexes Chinese, Japanese and Korean by character bigrams): given, indexes built with
    another are rebuilt with it; ``None`` keeps what the graph has and creates missing ones with
    :data:`DEFAULT_ANALYZER`."""
    check_embedder(store, embedder, dimensions)
    _reconcile_vector_indexes(store, embedder, dimensions)
    if analyzer is not None:
        _reconcile_analyzer(store, analyzer)
    for name in cypher.names("schema"):
        store.run_statements(name, dimensions=dimensions, analyzer=analyzer or DEFAULT_ANALYZER)
    store.write("meta/write", schema_version=SCHEMA_VERSION, embedder=embedder, dimensions=dimensions)
    store.write("meta/await_indexes", timeout_s=timeout_s)
    return schema_status(store)
