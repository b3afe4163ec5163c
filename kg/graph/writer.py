"""Writes the information-resource and corpus layers: documents, sections, chunks, tables, figures.

Documents are written in groups with ``UNWIND`` batches, one transaction per group, so a corpus of
10,000 small passages costs a few dozen transactions instead of 10,000. A group commits whole or not at
all; if it fails, its documents are retried one by one so a bad document fails alone and never leaves
half of itself behind. Re-loading an unchanged document (same sha256) is a no-op; a changed one has its
old subgraph, and everything derived only from it, replaced in the same transaction.

The chunk and title full-text indexes are eventually consistent (their updates leave the write
transaction), so every public write and delete returns only once those indexes hold what it committed:
a query after a load or a delete sees exactly the committed corpus.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from neo4j import RoutingControl

import cypher
from kg.errors import Neo4jError, Neo4jUnavailable
from kg.graph.mentions import mention_keys
from kg.graph.store import GraphStore, Transaction
from kg.retrieval.lucene import name_query
from loaders.models import Chunk, SourceDocument

__all__ = [
    "OWNED_LABELS", "DocumentWriter", "PreparedDocument", "WriteOutcome",
    "await_fulltext", "chunk_id", "delete_documents", "document_id", "naive_write", "section_id",
]

# Labels whose nodes belong to exactly one document (they carry document_id).
OWNED_LABELS = ("Atom", "Fact", "Row", "FactItem", "Route", "Topic", "Figure", "Table", "Chunk", "Section")
# Shared labels, deleted only when nothing links to them any more.
SHARED_LABELS = ("Entity", "Tag")
FUSION_LABELS = ("SuperTopic", "SuperFact")

WriteStatus = Literal["loaded", "unchanged", "replaced", "failed"]
_FILE_NAME = re.compile(r"\b[\w\-]+\.(?:pdf|md|markdown|html?|docx|txt|csv|tsv|xlsx)\b", re.IGNORECASE)


def document_id(source: str) -> str:
    """Stable across versions of a file: derived from where it comes from, not from its content."""
    return "doc_" + hashlib.sha1(source.encode("utf-8")).hexdigest()[:16]


def section_id(doc_id: str, key: str) -> str:
    return f"{doc_id}:s{key}"


def chunk_id(doc_id: str, order: int, text: str) -> str:
    return f"{doc_id}:c{order}:{hashlib.sha1(text.encode('utf-8')).hexdigest()[:10]}"


def _key(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass
class PreparedDocument:
    """A parsed document with its chunks and (optionally) their embeddings, ready to write."""

    id: str
    source: SourceDocument
    chunks: list[Chunk]
    embeddings: npt.NDArray[np.float32] | None = None


@dataclass
class WriteOutcome:
    document_id: str
    status: WriteStatus
    sections: int = 0
    chunks: int = 0
    tables: int = 0
    figures: int = 0
    error: str | None = None


@dataclass
class _Rows:
    """What the writer sends, in the shapes the one-label statements take (documents ``{id, props,
    embedding}``, sections ``{id, parent_id, props, embedding}``, chunks ``{id, section_id, props,
    embedding}``); :func:`_nested` regroups them per document for ``graph/create_corpus``."""

    documents: list[dict[str, Any]] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    next_links: list[dict[str, str]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)


def _centroids(prepared: PreparedDocument) -> dict[str | None, list[float]]:
    """Unit-length mean chunk vectors per section (key) and for the whole document (None): the
    coarse granularities of multi-granularity retrieval, when no LLM summary is embedded."""
    if prepared.embeddings is None or not prepared.chunks:
        return {}
    groups: dict[str | None, list[int]] = {None: list(range(len(prepared.chunks)))}
    for i, chunk in enumerate(prepared.chunks):
        groups.setdefault(chunk.section_key, []).append(i)
    out: dict[str | None, list[float]] = {}
    for key, idx in groups.items():
        mean = prepared.embeddings[idx].mean(axis=0)
        norm = float(np.linalg.norm(mean))
        if norm > 0:
            out[key] = (mean / norm).tolist()
    return out


def _rows(docs: Sequence[PreparedDocument]) -> _Rows:
    rows = _Rows()
    for prepared in docs:
        doc, did = prepared.source, prepared.id
        targets = {_key(PurePath(link.target.split("#")[0]).name) for link in doc.links if link.target}
        targets |= {_key(link.text) for link in doc.links if link.text}
        targets |= {_key(name) for name in _FILE_NAME.findall(doc.text[:200_000])}
        targets.discard("")
        targets.discard(_key(PurePath(doc.source).name))
        mention = mention_keys(doc.title)
        centroids = _centroids(prepared)
        rows.documents.append({"id": did, "embedding": centroids.get(None), "props": {
            "title": doc.title, "source": doc.source, "file": doc.file or doc.source,
            "sha256": doc.sha256, "format": doc.format,
            "pages": doc.pages, "metadata": [f"{k}={v}" for k, v in sorted(doc.metadata.items())],
            "language": doc.language, "source_name": _key(PurePath(doc.source.split("#")[0]).name),
            "title_key": _key(doc.title), "link_targets": sorted(targets),
            "mention_query": mention.query if mention else None,
            "mention_pattern": mention.pattern if mention else None,
        }})
        if targets:
            rows.references.append({"id": did, "targets": sorted(targets)})
        for section in sorted(doc.sections, key=lambda s: (s.level, s.order)):
            parent = did if section.parent_key is None else section_id(did, section.parent_key)
            rows.sections.append({
                "id": section_id(did, section.key), "parent_id": parent, "embedding": centroids.get(section.key),
                "props": {"document_id": did, "title": section.title, "level": section.level,
                          "order": section.order, "key": section.key, "page": section.page},
            })
        sentence_bounds = [(s.char_start, s.char_end) for s in doc.sentences]
        for i, chunk in enumerate(prepared.chunks):
            vector = None if prepared.embeddings is None else prepared.embeddings[i]  # a list once sent: _on_wire
            # Sentence indices a chunk covers let retrieval be scored on supporting sentences.
            covered = [n for n, (a, b) in enumerate(sentence_bounds) if a >= chunk.char_start and b <= chunk.char_end]
            rows.chunks.append({
                "id": chunk.id, "section_id": section_id(did, chunk.section_key), "embedding": vector, "props": {
                    "document_id": did, "text": chunk.text, "order": chunk.order, "kind": chunk.kind,
                    "page": chunk.page, "char_start": chunk.char_start, "char_end": chunk.char_end,
                    "tokens": chunk.tokens, "summary": chunk.summary, "title": doc.title, "sentences": covered,
                    "name_terms": name_query(chunk.text),
                },
            })
            if i:
                rows.next_links.append({"a": prepared.chunks[i - 1].id, "b": chunk.id})
        by_ref = {c.ref_key: c.id for c in prepared.chunks if c.ref_key}
        for table in doc.tables:
            rows.tables.append({
                "id": f"{did}:t{table.key}", "section_id": section_id(did, table.section_key), "document_id": did,
                "caption": table.caption, "page": table.page, "header": table.header, "n_rows": len(table.rows),
                "n_cols": len(table.header), "markdown": table.markdown, "csv": table.csv,
                "char_start": table.char_start, "char_end": table.char_end, "chunk_id": by_ref.get(table.key),
            })
        for figure in doc.figures:
            rows.figures.append({
                "id": f"{did}:f{figure.key}", "section_id": section_id(did, figure.section_key),
                "document_id": did, "caption": figure.caption, "page": figure.page,
                "char_start": figure.char_start, "char_end": figure.char_end,
                "chunk_id": by_ref.get(figure.key),
            })
    return rows


def _listed(vector: Any) -> Any:
    # The driver packs a numpy row element by element, about five times slower than a list (measured).
    return vector.tolist() if isinstance(vector, np.ndarray) else vector


def _on_wire(row: dict[str, Any]) -> dict[str, Any]:
    """A row with its vectors made lists as its batch is sent, so a large document's vectors are never all
    held as Python floats at once (for 75,000 chunks of 256 dimensions that was 0.4 GB)."""
    out = {**row, "embedding": _listed(row.get("embedding"))}
    if "chunks" in row:
        out["chunks"] = [{**c, "embedding": _listed(c["embedding"])} for c in row["chunks"]]
    return out


def _nested(rows: _Rows) -> list[dict[str, Any]]:
    """The flat rows regrouped one per document for ``graph/create_corpus``: sections and chunks refer to
    their parent by position in the document's row (an unknown section becomes null, and the statement
    fails rather than write a chunk without its section)."""
    docs: dict[str, dict[str, Any]] = {}
    positions: dict[str, int] = {}
    for doc in rows.documents:
        docs[doc["id"]] = {**doc, "sections": [], "chunks": []}
    for section in rows.sections:
        did = section["props"]["document_id"]
        own = docs[did]["sections"]
        positions[section["id"]] = len(own)
        parent = -1 if section["parent_id"] == did else positions.get(section["parent_id"])
        own.append({"id": section["id"], "parent": parent, "props": section["props"],
                    "embedding": section["embedding"]})
    for chunk in rows.chunks:
        docs[chunk["props"]["document_id"]]["chunks"].append({
            "id": chunk["id"], "section": positions.get(chunk["section_id"]), "props": chunk["props"],
            "embedding": chunk["embedding"],
        })
    return list(docs.values())


def _delete_in(tx: Transaction, ids: list[str]) -> None:
    shared = tx.run("graph/shared_candidates", ids=ids)[0]["ids"] if ids else []
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
    store.atomic(lambda tx: _delete_in(tx, ids))
    await_fulltext(store)


def await_fulltext(store: GraphStore) -> None:
    """Block until the eventually consistent full-text indexes have applied every committed write."""
    store.write("meta/await_fulltext")


class DocumentWriter:
    """Batched writer of prepared documents (see the module docstring)."""

    def __init__(self, store: GraphStore, *, batch_size: int = 1000) -> None:
        self.store = store
        self.batch_size = batch_size

    def states(self, ids: list[str]) -> dict[str, str]:
        return {r["id"]: r["sha256"] for r in self.store.read("graph/document_states", ids=ids)}

    def write(self, docs: Sequence[PreparedDocument]) -> list[WriteOutcome]:
        """Write a group of documents; returns one outcome per document, in order."""
        outcomes = self._write(docs)
        await_fulltext(self.store)
        return outcomes

    def _write(self, docs: Sequence[PreparedDocument]) -> list[WriteOutcome]:
        known = self.states([d.id for d in docs])
        todo = [d for d in docs if known.get(d.id) != d.source.sha256]
        outcomes = {d.id: WriteOutcome(d.id, "unchanged") for d in docs if known.get(d.id) == d.source.sha256}
        if todo:
            try:
                outcomes.update(self._write_group(todo, known))
            except Neo4jUnavailable:
                raise
            except Neo4jError:
                if len(todo) == 1:
                    raise
                for doc in todo:  # isolate the failing document; the others still load
                    try:
                        outcomes.update(self._write_group([doc], known))
                    except Neo4jUnavailable:
                        raise
                    except Neo4jError as exc:
                        outcomes[doc.id] = WriteOutcome(doc.id, "failed", error=str(exc).splitlines()[0])
        return [outcomes[d.id] for d in docs]

    def write_many(self, groups: Sequence[Sequence[PreparedDocument]], *, workers: int = 2) -> list[WriteOutcome]:
        """Write groups on ``workers`` sessions at once (each group still one transaction, with the same
        per-document retry), so the server builds one group's index entries while the client packs the
        next. Groups must not share a document. Outcomes come back in input order."""
        if workers <= 1 or len(groups) <= 1:
            outcomes = [outcome for group in groups for outcome in self._write(group)]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                outcomes = [outcome for done in pool.map(self._write, groups) for outcome in done]
        await_fulltext(self.store)
        return outcomes

    def _write_group(self, docs: list[PreparedDocument], known: dict[str, str]) -> dict[str, WriteOutcome]:
        """One transaction. A document of at most ``batch_size`` chunks is one row of ``graph/create_corpus``
        (many per statement); a larger one is written label by label in statements of ``batch_size`` rows,
        so no statement carries a whole large document."""
        size = self.batch_size
        small = _rows([d for d in docs if len(d.chunks) <= size])
        large = _rows([d for d in docs if len(d.chunks) > size])
        nested = _nested(small)
        replaced = [d.id for d in docs if d.id in known]

        def work(tx: Transaction) -> None:
            if replaced:
                _delete_in(tx, replaced)
            expected = created = 0
            for rows in (small, large):
                expected += len(rows.documents) + len(rows.sections) + len(rows.chunks)
            created += tx.run_batches("graph/create_corpus", nested, batch_size=size, encode=_on_wire)
            for name, items in (("graph/create_documents", large.documents), ("graph/create_sections", large.sections),
                                ("graph/create_chunks", large.chunks)):
                created += tx.run_batches(name, items, batch_size=size, encode=_on_wire)
            if created != expected:  # never commit half a document
                raise Neo4jError(f"the corpus statements created {created} of {expected} nodes; nothing was written")
            tx.run_batches("graph/link_sections", large.sections, batch_size=size)
            tx.run_batches("graph/link_next", large.next_links, batch_size=size)
            for name, items in (("graph/create_tables", small.tables + large.tables),
                                ("graph/create_figures", small.figures + large.figures)):
                made = tx.run_batches(name, items, batch_size=size)
                if made != len(items):  # a row whose parent was not matched
                    raise Neo4jError(f"{name} created {made} of {len(items)} nodes; nothing was written")
            tx.run_batches("graph/link_references", small.references + large.references, batch_size=size)

        self.store.atomic(work)
        return {
            d.id: WriteOutcome(
                d.id, "replaced" if d.id in known else "loaded", sections=len(d.source.sections),
                chunks=len(d.chunks), tables=len(d.source.tables), figures=len(d.source.figures),
            )
            for d in docs
        }


def naive_write(store: GraphStore, docs: Sequence[PreparedDocument]) -> int:
    """One statement per row, the way naive loaders write; kept only as the benchmark's baseline."""
    rows = _rows(docs)
    count = 0
    for name, items in (("graph/create_documents", rows.documents), ("graph/create_sections", rows.sections),
                        ("graph/link_sections", rows.sections), ("graph/create_chunks", rows.chunks),
                        ("graph/link_next", rows.next_links)):
        text = cypher.load(name)
        for item in items:
            store.query(text, routing=RoutingControl.WRITE, rows=[_on_wire(item) if "props" in item else item])
            count += 1
    await_fulltext(store)
    return count

