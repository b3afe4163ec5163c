"""The information-resource layer: a document's node, the references it makes, and deleting documents.

A document names the documents it refers to by file name (links and file names in its text) and by title
(title mentions, :mod:`kg.layers.resource.references`); ``REFERENCES`` edges follow from those keys. Deleting
a document removes everything it owns in every layer (the nodes that carry its ``document_id``) and the shared
nodes nothing else links to, in one transaction.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from kg.layers.resource.references import mention_keys
from kg.store.base import GraphStore, Transaction
from kg.store.queries import SHARED_CANDIDATES
from loaders.models import SourceDocument

__all__ = [
    "FUSION_LABELS", "OWNED_LABELS", "SHARED_LABELS", "await_fulltext", "delete_documents", "delete_in",
    "document_props",
]

# Labels whose nodes belong to exactly one document (they carry document_id).
OWNED_LABELS = ("Atom", "Fact", "Row", "FactItem", "Route", "Topic", "Figure", "Table", "Chunk", "Section")
# Shared labels, deleted only when nothing links to them any more.
SHARED_LABELS = ("Entity", "Tag")
FUSION_LABELS = ("SuperTopic", "SuperFact")

_EXTENSIONS = r"\.(?:pdf|md|markdown|html?|docx|txt|csv|tsv|xlsx)\b"
_FILE_NAME = re.compile(r"\b[\w\-]+" + _EXTENSIONS, re.IGNORECASE)
_EXTENSION = re.compile(_EXTENSIONS, re.IGNORECASE)  # searched first: ten times faster, and rarely found


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def _file_name(path: str) -> str:
    """The last component of a path or URL, without its fragment, as link targets name it."""
    return _key(posixpath.basename(path.split("#")[0].rstrip("/")))


def document_props(doc: SourceDocument) -> dict[str, Any]:
    """The ``Document`` node's properties, with the keys its references are found by."""
    source_name = _file_name(doc.source)
    targets = {_file_name(link.target) for link in doc.links if link.target}
    targets |= {_key(link.text) for link in doc.links if link.text}
    head = doc.text[:200_000]
    if _EXTENSION.search(head):
        targets |= {_key(name) for name in _FILE_NAME.findall(head)}
    targets -= {"", source_name}
    mention = mention_keys(doc.title)
    return {
        "title": doc.title, "source": doc.source, "file": doc.file or doc.source,
        "sha256": doc.sha256, "format": doc.format,
        "pages": doc.pages, "metadata": [f"{k}={v}" for k, v in sorted(doc.metadata.items())],
        "language": doc.language, "source_name": source_name,
        "title_key": _key(doc.title), "link_targets": sorted(targets),
        "mention_query": mention.query if mention else None,
        "mention_pattern": mention.pattern if mention else None,
    }


def delete_in(tx: Transaction, ids: list[str]) -> None:
    shared = tx.run(SHARED_CANDIDATES, ids=ids)[0]["ids"] if ids else []
    for label in OWNED_LABELS:
        tx.run_template("graph/delete_owned", label=label, ids=ids)
    tx.run("graph/delete_documents", ids=ids)
    for label in SHARED_LABELS:
        tx.run_template("graph/delete_orphans", label=label, ids=shared)
    tx.run("graph/refresh_aliases", ids=shared)
    for label in FUSION_LABELS:
        tx.run_template("graph/delete_empty_fusion", label=label)


def delete_documents(store: GraphStore, ids: list[str]) -> None:
    """Remove documents and everything derived only from them, in one transaction."""
    store.atomic(lambda tx: delete_in(tx, ids))
    await_fulltext(store)


def await_fulltext(store: GraphStore) -> None:
    """Block until the eventually consistent full-text indexes have applied every committed write."""
    store.write("meta/await_fulltext")
