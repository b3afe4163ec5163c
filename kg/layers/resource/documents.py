"""The information-resource layer: a document's node, the references it makes, and deleting documents.

A document names the documents it refers to by file name (links and file names in its text) and by title
(title mentions, :mod:`kg.layers.resource.references`); ``REFERENCES`` edges follow from those keys. Deleting
a document removes everything it owns in every layer (the nodes that carry its ``document_id``) and the shared
nodes nothing else links to: in one transaction up to :data:`ATOMIC_DELETE_CHUNKS` chunks, else in batches of
bounded transactions (:func:`delete_documents`), so a document of any size is deleted in bounded memory.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Any

from neo4j import RoutingControl

import cypher
from kg.layers.resource import references
from kg.layers.resource.references import choose_mention_key, mention_keys
from kg.store.base import GraphStore, Query, Transaction
from kg.store.queries import (
    CHUNKS_SHARED,
    COUNT_CHUNKS,
    DELETE_HIDDEN_BATCH,
    DELETE_OWNED_BATCH,
    RETIRE_DOCUMENTS,
    SHARED_CANDIDATES,
    SWEEP_ORPHANS,
    DeletedRow,
)
from loaders.models import SourceDocument

__all__ = [
    "ATOMIC_DELETE_CHUNKS", "DELETE_BATCH", "FUSION_LABELS", "KEPT_LAYERS", "OWNED_LABELS", "SHARED_LABELS",
    "await_fulltext", "clear_for_replacement", "delete_documents", "delete_in", "document_props",
]

# Labels whose nodes belong to exactly one document (they carry document_id).
OWNED_LABELS = ("Atom", "Fact", "Row", "FactItem", "Route", "Topic", "Figure", "Table", "Chunk", "Section")
# Shared labels, deleted only when nothing links to them any more.
SHARED_LABELS = ("Entity", "Tag")
FUSION_LABELS = ("SuperTopic", "SuperFact")
# A replaced document's unchanged chunks keep what these distillation layers made of them: each of their nodes
# and links belongs to one chunk and follows from its text alone (a table's rows excepted: they hang off the
# table, written anew; graph/reset_kept_chunks). The pseudo-graph is built over a document's parts, so it runs
# again on every chunk of the new version.
KEPT_LAYERS = ("atoms", "triples", "tags", "tables")
# Owned labels whose nodes a kept chunk keeps: itself and the nodes distilled from it alone (chunk_id).
_KEPT_LABELS = ("Atom", "Fact", "Row", "Chunk")
# Documents holding at most this many chunks in all are deleted in one transaction (with everything distilled
# from them: about 20 nodes a chunk); larger ones in batches of DELETE_BATCH nodes.
ATOMIC_DELETE_CHUNKS = 2000
DELETE_BATCH = 5000
_EVERY = 2**62  # the LIMIT of a batched deletion run whole inside one transaction

_EXTENSIONS = r"\.(?:pdf|md|markdown|html?|docx|txt|csv|tsv|xlsx)\b"
_FILE_NAME = re.compile(r"\b[\w\-]+" + _EXTENSIONS, re.IGNORECASE)
_EXTENSION = re.compile(_EXTENSIONS, re.IGNORECASE)  # searched first: ten times faster, and rarely found


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def _file_name(path: str) -> str:
    """The last component of a path or URL, without its fragment, as link targets name it."""
    return _key(posixpath.basename(path.split("#")[0].rstrip("/")))


def document_props(doc: SourceDocument, mention_key: str | None = None,
                   mention_names: Sequence[str] | None = None) -> dict[str, Any]:
    """The ``Document`` node's properties, with the keys its references are found by: ``mention_names``, the
    names other documents call it by, the first stored as ``mention_name`` and all of them as ``mention_names``
    when there are several (left out, :func:`~kg.layers.resource.references.mention_names` names it), and
    ``mention_key``, the term other documents' chunks find those names by
    (:func:`~kg.layers.resource.references.assign_mention_keys` chooses it against the stored ones); left out,
    the name's longest term."""
    source_name = _file_name(doc.source)
    targets = {_file_name(link.target) for link in doc.links if link.target}
    targets |= {_key(link.text) for link in doc.links if link.text}
    head = doc.text[:200_000]
    if _EXTENSION.search(head):
        targets |= {_key(name) for name in _FILE_NAME.findall(head)}
    targets -= {"", source_name}
    names = tuple(mention_names) if mention_names else references.mention_names(doc.title, doc.text)
    mention = mention_keys(*names)
    return {
        "title": doc.title, "source": doc.source, "file": doc.file or doc.source,
        "sha256": doc.sha256, "format": doc.format,
        "pages": doc.pages, "metadata": [f"{k}={v}" for k, v in sorted(doc.metadata.items())],
        "language": doc.language, "source_name": source_name,
        "title_key": _key(doc.title), "link_targets": sorted(targets), "mention_name": names[0],
        "mention_names": list(names) if len(names) > 1 else None,
        "mention_query": mention.query if mention else None,
        "mention_pattern": mention.pattern if mention else None,
        "mention_key": None if mention is None else (
            mention_key if mention_key is not None else choose_mention_key(mention.terms, {})),
    }


def delete_in(tx: Transaction, ids: list[str], keep: list[str] | None = None) -> None:
    """Delete the documents inside ``tx``, except the chunks ``keep`` (unchanged chunks of documents being
    replaced in the same transaction), which keep their :data:`KEPT_LAYERS`."""
    shared = tx.run(SHARED_CANDIDATES, ids=ids)[0]["ids"] if ids else []
    for label in OWNED_LABELS:
        if keep and label in _KEPT_LABELS:
            tx.run_template("graph/delete_owned_except", label=label, ids=ids, keep=keep)
        else:
            tx.run_template("graph/delete_owned", label=label, ids=ids)
    if keep:
        tx.run("graph/reset_kept_chunks", ids=keep, carried=list(KEPT_LAYERS))
    tx.run(DELETE_HIDDEN_BATCH, ids=ids, limit=_EVERY)
    tx.run("graph/delete_documents", ids=ids)
    for label in SHARED_LABELS:
        tx.run_template("graph/delete_orphans", label=label, ids=shared)
    tx.run("graph/refresh_aliases", ids=shared)
    for label in FUSION_LABELS:
        tx.run_template("graph/delete_empty_fusion", label=label)


def delete_documents(store: GraphStore, ids: list[str], *, batch: int = DELETE_BATCH,
                     atomic_chunks: int = ATOMIC_DELETE_CHUNKS) -> None:
    """Remove documents and everything derived only from them: in one transaction when they hold at most
    ``atomic_chunks`` chunks, else in transactions of at most ``batch`` nodes (see :func:`_delete_in_batches`)."""
    if ids and store.read(COUNT_CHUNKS, ids=ids)[0]["count"] > atomic_chunks:
        _delete_in_batches(store, ids, batch)
    else:
        store.atomic(lambda tx: delete_in(tx, ids))
    await_fulltext(store)


def _delete_in_batches(store: GraphStore, ids: list[str], batch: int) -> None:
    """Hide the documents' chunks from retrieval and mark the documents ``deleting`` in one transaction (a
    re-load then replaces them, and a deletion cut short is finished by the next), then delete what they own
    label by label, distilled nodes first, ``batch`` nodes a transaction, the shared nodes left orphaned, and
    the document nodes last. The shared nodes are the ones the documents' chunks reach, read before the
    chunks are hidden; a deletion that resumes an interrupted one no longer knows them and sweeps every
    orphan instead."""
    shared = store.read(SHARED_CANDIDATES, ids=ids)[0]["ids"]

    def retire(tx: Transaction) -> bool:
        resumed = any(r["resumed"] for r in tx.run(RETIRE_DOCUMENTS, ids=ids))
        tx.run("graph/hide_chunks", ids=ids)
        return resumed

    resumed = store.atomic(retire)
    for label in OWNED_LABELS:
        _until_none(store, DELETE_OWNED_BATCH.render(label=label), ids=ids, limit=batch)
    _until_none(store, DELETE_HIDDEN_BATCH, ids=ids, limit=batch)
    _sweep(store, shared, batch, resumed=resumed)
    store.write("graph/delete_documents", ids=ids)


def clear_for_replacement(store: GraphStore, doc_id: str, keep: list[str], removed: list[str], *,
                          batch: int = DELETE_BATCH) -> None:
    """Clear a large document for its new version, written hidden in several transactions after this, except its
    chunks ``keep`` (same text in both versions) and what was distilled from them alone. The first transaction
    marks it ``loading``, resets the kept chunks (graph/reset_kept_chunks) and hides every chunk, so retrieval
    stops seeing the old version at once and an interruption leaves it to be written again, its kept chunks
    still kept; then its ``removed`` chunks go with their atoms, facts and rows, and the rest it owns label by label,
    at most ``batch`` nodes a transaction, the shared nodes left orphaned and the document node last."""
    ids = [doc_id]
    chunks_a_write = max(1, batch // 100)  # with a chunk go its atoms, facts and rows: up to about a hundred nodes
    shared = sorted({x for start in range(0, len(removed), chunks_a_write)
                     for x in store.read(CHUNKS_SHARED, ids=removed[start:start + chunks_a_write])[0]["ids"]})

    def retire(tx: Transaction) -> None:
        tx.run("graph/mark_loading", ids=ids)
        for start in range(0, len(keep), batch):
            tx.run("graph/reset_kept_chunks", ids=keep[start:start + batch], carried=list(KEPT_LAYERS))
        tx.run("graph/hide_chunks", ids=ids)

    store.atomic(retire)
    for start in range(0, len(removed), chunks_a_write):
        store.write("graph/delete_removed_chunks", ids=removed[start:start + chunks_a_write])
    for label in OWNED_LABELS:
        if label not in _KEPT_LABELS:
            _until_none(store, DELETE_OWNED_BATCH.render(label=label), ids=ids, limit=batch)
    _sweep(store, shared, batch, resumed=False)
    store.write("graph/delete_documents", ids=ids)


def _sweep(store: GraphStore, shared: list[str], batch: int, *, resumed: bool) -> None:
    """The shared nodes among ``shared`` that nothing links to any more (all orphans when ``resumed``), the
    aliases of those left, and the fusion nodes left without members."""
    for label in SHARED_LABELS:
        for start in range(0, len(shared), batch):
            store.query(cypher.render("graph/delete_orphans", label=label), routing=RoutingControl.WRITE,
                        ids=shared[start:start + batch])
        if resumed:
            _until_none(store, SWEEP_ORPHANS.render(label=label), limit=batch)
    for start in range(0, len(shared), batch):
        store.write("graph/refresh_aliases", ids=shared[start:start + batch])
    for label in FUSION_LABELS:
        store.query(cypher.render("graph/delete_empty_fusion", label=label), routing=RoutingControl.WRITE)


def _until_none(store: GraphStore, query: Query[DeletedRow], **params: Any) -> None:
    """Run a ``LIMIT $limit`` deletion again until it deletes fewer than ``limit`` nodes."""
    while store.write(query, **params)[0]["deleted"] >= params["limit"]:
        pass


def await_fulltext(store: GraphStore) -> None:
    """Block until the eventually consistent full-text indexes have applied every committed write."""
    store.write("meta/await_fulltext")
