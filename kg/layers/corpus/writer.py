"""Writes a document's information-resource and corpus layers together: the document node (its properties
and references from :mod:`kg.layers.resource.documents`), its sections, chunks, tables and figures.

Documents are written in groups with ``UNWIND`` batches, one transaction per group, so a corpus of
10,000 small passages costs a few dozen transactions instead of 10,000. A group commits whole or not at
all; if it fails, its documents are retried one by one so a bad document fails alone and never leaves
half of itself behind. Re-loading an unchanged document (same sha256) is a no-op; a changed one has its
old subgraph, and everything derived only from it, replaced in the same transaction. Groups commit one
after the other on one session, and the next group's rows are built while the previous one is at the
server (:meth:`DocumentWriter.write_many`).

The chunk and title full-text indexes are eventually consistent (their updates leave the write
transaction), so every public write and delete returns only once those indexes hold what it committed:
a query after a load or a delete sees exactly the committed corpus.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from kg.embeddings import Embedder
from kg.errors import ConflictError, EmbeddingError, Neo4jError, Neo4jUnavailable
from kg.layers.resource.documents import (
    ATOMIC_DELETE_CHUNKS,
    DELETE_BATCH,
    await_fulltext,
    clear_for_replacement,
    delete_documents,
    delete_in,
    document_props,
)
from kg.layers.resource.references import assign_mention_keys, mention_keys, mention_names
from kg.shared.ids import section_id
from kg.store.base import GraphStore, Transaction, embedding_listed
from kg.store.lucene import lookup_terms, name_query
from kg.store.queries import COUNT_CHUNKS, DOCUMENT_STATES, KEEP_CHUNKS, REVEAL_CHUNKS, STORED_CHUNKS
from loaders.models import Chunk, Section, Sentence, SourceDocument

__all__ = [
    "GROUP_CHUNKS", "LOADED_BY_ANOTHER_RUN", "CorpusRows", "DocumentWriter", "PreparedDocument", "WriteOutcome",
    "corpus_rows", "document_groups", "on_wire",
]

# Chunks per write transaction: large enough that a corpus of small passages costs few commits, small
# enough that the next group's rows are built while this one is at the server.
GROUP_CHUNKS = 2000
WriteStatus = Literal["loaded", "unchanged", "replaced", "failed"]



@dataclass
class PreparedDocument:
    """A parsed document with its chunks and (optionally) their embeddings, ready to write."""

    id: str
    source: SourceDocument
    chunks: list[Chunk]
    embeddings: npt.NDArray[np.float32] | None = None
    # The names other documents call it by (its title, or its opening's name and that name's short forms:
    # references.mention_names) and the term their chunks find them by, chosen by the writer against the stored ones.
    mention_names: tuple[str, ...] | None = None
    mention_key: str | None = None


@dataclass
class WriteOutcome:
    document_id: str
    status: WriteStatus
    sections: int = 0
    chunks: int = 0
    tables: int = 0
    figures: int = 0
    error: str | None = None
    note: str | None = None
    # Chunks of a replaced document kept from its old version (same text), with what was distilled from them.
    kept: int = 0


# The outcome of a document another run wrote between this run's check and its commit (see ConflictError).
LOADED_BY_ANOTHER_RUN = "loaded by another run: it was already stored, with this content, when this run wrote it"


@dataclass
class _Rows:
    """What the writer sends. ``documents`` are ``graph/create_corpus`` rows, one per document: ``{id,
    props, embedding, sections, chunks}``, where a section row is ``{id, parent, props, embedding}`` and a
    chunk row ``{id, section, props, embedding}``, ``parent`` and ``section`` being positions in the
    document's row (-1: the document itself; null: unknown, so the statement fails instead of writing an
    orphan). :func:`_flat` turns one into the rows of the one-label statements."""

    documents: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class CorpusRows:
    """One or more documents' rows for the one-label statements: documents ``{id, props, embedding}``,
    sections ``{id, parent_id, props, embedding}``, chunks ``{id, section_id, props, embedding}``."""

    documents: list[dict[str, Any]] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    next_links: list[dict[str, str]] = field(default_factory=list)


def _positions(row: dict[str, Any]) -> dict[int, str]:
    """A position in a document's row -> the id it stands for (-1: the document; an unknown one: absent)."""
    return {-1: row["id"], **{i: s["id"] for i, s in enumerate(row["sections"])}}


def _flat_chunks(chunks: Sequence[dict[str, Any]], at: dict[int, str]) -> list[dict[str, Any]]:
    return [{"id": c["id"], "section_id": at.get(c["section"]), "props": c["props"], "embedding": c["embedding"]}
            for c in chunks]


def _flat(documents: Sequence[dict[str, Any]]) -> CorpusRows:
    flat = CorpusRows()
    for row in documents:
        at = _positions(row)
        flat.documents.append({"id": row["id"], "props": row["props"], "embedding": row["embedding"]})
        flat.sections += [{"id": s["id"], "parent_id": at.get(s["parent"]), "props": s["props"],
                           "embedding": s["embedding"]} for s in row["sections"]]
        chunks = row["chunks"]
        flat.chunks += _flat_chunks(chunks, at)
        flat.next_links += [{"a": a["id"], "b": b["id"]} for a, b in itertools.pairwise(chunks)]
    return flat


@dataclass
class _GroupRows:
    """A group's rows, built before its transaction opens. A document of at most ``batch_size`` chunks is
    one row of ``graph/create_corpus`` (many per statement); a larger one is written label by label
    (``large``) in statements of ``batch_size`` rows, so no statement carries a whole large document."""

    corpus: list[dict[str, Any]]
    large: CorpusRows
    tables: list[dict[str, Any]]
    figures: list[dict[str, Any]]
    references: list[dict[str, Any]]
    expected: int  # the nodes the corpus statements must create

    @classmethod
    def build(cls, docs: Sequence[PreparedDocument], batch_size: int) -> _GroupRows:
        rows = _rows(docs)
        return cls(
            corpus=[r for r in rows.documents if len(r["chunks"]) <= batch_size],
            large=_flat([r for r in rows.documents if len(r["chunks"]) > batch_size]),
            tables=rows.tables, figures=rows.figures, references=rows.references,
            expected=sum(1 + len(r["sections"]) + len(r["chunks"]) for r in rows.documents),
        )


@dataclass
class _Planned:
    """A group ready for its transaction: the documents (for outcomes in order), their stored hashes, the
    ones to write and their rows (None when every document is unchanged), and the large ones written
    alone in several transactions (:meth:`DocumentWriter._write_staged`)."""

    docs: Sequence[PreparedDocument]
    known: dict[str, str]
    todo: list[PreparedDocument]
    rows: _GroupRows | None
    staged: list[PreparedDocument] = field(default_factory=list)  # written alone, in several transactions


class _Centroids:
    """Unit-length mean chunk vectors per section (key) and for the whole document (None): the coarse
    granularities of multi-granularity retrieval, when no LLM summary is embedded. Summed as chunks are added,
    so a large document's come from its batches without all its vectors at once.

    A section or document of a single chunk gets none: its centroid would be that chunk's own direction,
    which the chunk's vector already holds, and multi-granularity retrieval scores a section or document
    without a vector by its chunk's (the same cosine). Every vector written costs an HNSW insertion at
    commit, the larger part of a write; a corpus of one-chunk passages (QA corpora, ``bench scale``) wrote
    three identical vectors per passage (2,000 passages: 9.1-12.4 s written with them, 4.7 s without, on
    the loaded machine)."""

    def __init__(self) -> None:
        self._sums: dict[str | None, npt.NDArray[np.float64]] = {}
        self._counts: dict[str | None, int] = {}

    def add(self, chunks: Sequence[Chunk], vectors: npt.NDArray[np.float32]) -> _Centroids:
        rows: dict[str | None, list[int]] = {None: list(range(len(chunks)))}
        for i, chunk in enumerate(chunks):
            rows.setdefault(chunk.section_key, []).append(i)
        for key, idx in rows.items():
            total = vectors[idx].sum(axis=0, dtype=np.float64)
            self._sums[key] = self._sums[key] + total if key in self._sums else total
            self._counts[key] = self._counts.get(key, 0) + len(idx)
        return self

    def vectors(self) -> dict[str | None, list[float]]:
        out: dict[str | None, list[float]] = {}
        for key, total in self._sums.items():
            norm = float(np.linalg.norm(total))
            if self._counts[key] >= 2 and norm > 0:
                out[key] = (total / norm).astype(np.float32).tolist()
        return out


def _centroids(prepared: PreparedDocument) -> dict[str | None, list[float]]:
    if prepared.embeddings is None or not prepared.chunks:
        return {}
    return _Centroids().add(prepared.chunks, prepared.embeddings).vectors()


def _covered(chunks: Sequence[Chunk], sentences: Sequence[Sentence]) -> list[list[int]]:
    """For each chunk, the indices of the sentences wholly inside it (retrieval is scored on supporting
    sentences); by binary search over the sentence starts, so a long document is not chunks x sentences."""
    order = sorted(range(len(sentences)), key=lambda n: sentences[n].char_start)
    starts = [sentences[n].char_start for n in order]
    out = []
    for chunk in chunks:
        first = bisect.bisect_left(starts, chunk.char_start)
        last = bisect.bisect_left(starts, chunk.char_end, lo=first)
        out.append(sorted(n for n in order[first:last] if sentences[n].char_end <= chunk.char_end))
    return out


def _name_terms(text: str) -> dict[str, Any]:
    """A chunk's ``name_terms``, and its ``mention_terms`` when the titles it may name are looked up by other
    terms than those (CJK characters: :func:`~kg.store.lucene.lookup_terms`); otherwise the
    lookup splits ``name_terms`` and nothing more is stored."""
    terms = name_query(text)
    lookup = lookup_terms(terms)
    return {"name_terms": terms, "mention_terms": lookup if lookup != terms.split() else None}


def _ordered_sections(doc: SourceDocument) -> list[Section]:
    """Sections by level, then reading order: the order of a document's row, parents before children."""
    return sorted(doc.sections, key=lambda s: (s.level, s.order))


def _section_positions(doc: SourceDocument) -> dict[str, int]:
    """A section's key -> its position in the document's row."""
    return {s.key: i for i, s in enumerate(_ordered_sections(doc))}


def _chunk_rows(prepared: PreparedDocument, position: dict[str, int], start: int = 0, stop: int | None = None,
                vectors: npt.NDArray[np.float32] | None = None) -> list[dict[str, Any]]:
    """Rows of the chunks ``[start:stop]``: a large document's are built a batch at a time, as it is written,
    with the batch's ``vectors`` when the document's are not embedded ahead."""
    doc, did = prepared.source, prepared.id
    chunks = prepared.chunks[start:stop]
    if vectors is None and prepared.embeddings is not None:
        vectors = prepared.embeddings[start:start + len(chunks)]
    covered = _covered(chunks, doc.sentences)
    return [{
        "id": chunk.id, "section": position.get(chunk.section_key),
        "embedding": None if vectors is None else vectors[i],  # a list once sent: on_wire
        "props": {
            "document_id": did, "text": chunk.text, "order": chunk.order, "kind": chunk.kind,
            "page": chunk.page, "char_start": chunk.char_start, "char_end": chunk.char_end,
            "tokens": chunk.tokens, "summary": chunk.summary, "title": doc.title, "sentences": covered[i],
            **_name_terms(chunk.text),
        },
    } for i, chunk in enumerate(chunks)]


def _rows(docs: Sequence[PreparedDocument], *, with_chunks: bool = True) -> _Rows:
    """The documents' rows; without ``with_chunks`` their chunk rows are left empty (:func:`_chunk_rows`)."""
    rows = _Rows()
    for prepared in docs:
        doc, did = prepared.source, prepared.id
        centroids = _centroids(prepared)
        position = _section_positions(doc)
        section_rows = [{
            "id": section_id(did, s.key), "parent": -1 if s.parent_key is None else position.get(s.parent_key),
            "embedding": centroids.get(s.key),
            "props": {"document_id": did, "title": s.title, "level": s.level, "order": s.order, "key": s.key,
                      "page": s.page},
        } for s in _ordered_sections(doc)]
        chunk_rows = _chunk_rows(prepared, position) if with_chunks else []
        props = document_props(doc, prepared.mention_key, prepared.mention_names)
        rows.documents.append({"id": did, "embedding": centroids.get(None), "sections": section_rows,
                               "chunks": chunk_rows, "props": props})
        if props["link_targets"]:
            rows.references.append({"id": did, "targets": props["link_targets"]})
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


def on_wire(row: dict[str, Any]) -> dict[str, Any]:
    """A row with its vectors (and its chunks') made lists as its batch is sent, so a large document's vectors
    are never all held as Python floats at once (for 75,000 chunks of 256 dimensions that was 0.4 GB)."""
    out = dict(embedding_listed(row))
    if "chunks" in row:
        out["chunks"] = [embedding_listed(c) for c in row["chunks"]]
    return out


def document_groups(docs: Iterable[PreparedDocument],
                    group_chunks: int = GROUP_CHUNKS) -> Iterator[list[PreparedDocument]]:
    """Consecutive documents in groups of about ``group_chunks`` chunks (a group closes once it reaches
    that many), the unit :meth:`DocumentWriter.write_many` commits."""
    group: list[PreparedDocument] = []
    size = 0
    for doc in docs:
        group.append(doc)
        size += len(doc.chunks)
        if size >= group_chunks:
            yield group
            group, size = [], 0
    if group:
        yield group


class DocumentWriter:
    """Batched writer of prepared documents (see the module docstring)."""

    def __init__(self, store: GraphStore, *, batch_size: int = 1000, staged_chunks: int = GROUP_CHUNKS,
                 embedder: Embedder | None = None) -> None:
        self.store = store
        self.batch_size = batch_size
        self.staged_chunks = staged_chunks
        # Embeds a large document's chunks a batch at a time as they are written (see _write_staged), when the
        # caller left its ``embeddings`` None; without it such a document is written without vectors.
        self.embedder = embedder

    def staged(self, doc: PreparedDocument) -> bool:
        """Whether ``doc`` is written alone in several transactions (:meth:`_write_staged`)."""
        return len(doc.chunks) > self.staged_chunks

    def states(self, ids: list[str]) -> dict[str, str]:
        return {r["id"]: r["sha256"] for r in self.store.read(DOCUMENT_STATES, ids=ids)}

    def write(self, docs: Sequence[PreparedDocument]) -> list[WriteOutcome]:
        """Write a group of documents in one transaction; returns one outcome per document, in order."""
        return self.write_many([docs])

    def write_many(self, groups: Iterable[Sequence[PreparedDocument]]) -> list[WriteOutcome]:
        """Write groups, each in one transaction (with the per-document retry of :meth:`_commit`), one after
        the other on one session. While a group is at the server, the next is taken from ``groups`` (a
        generator may embed it only then) and its rows are built, so the client's work overlaps the
        server's. Groups must not share a document. Outcomes come back in input order; a group that fails
        stops the writing, and its error is raised."""
        outcomes: list[WriteOutcome] = []
        with ThreadPoolExecutor(max_workers=1) as session:
            at_server: Future[list[WriteOutcome]] | None = None
            for group in groups:
                planned = self._plan(group)
                if at_server is not None:
                    outcomes += at_server.result()
                at_server = session.submit(self._commit, planned)
            if at_server is not None:
                outcomes += at_server.result()
        await_fulltext(self.store)
        return outcomes

    def _plan(self, docs: Sequence[PreparedDocument]) -> _Planned:
        known = self.states([d.id for d in docs])
        changed = [d for d in docs if known.get(d.id) != d.source.sha256]
        for doc in changed:  # once per document: naming may scan its whole text for the title
            doc.mention_names = mention_names(doc.source.title, doc.source.text)
        titles = {d.id: found for d in changed if d.mention_names and (found := mention_keys(*d.mention_names))}
        if titles:
            chosen = assign_mention_keys(self.store, titles)
            for doc in changed:
                doc.mention_key = chosen.get(doc.id)
        todo = [d for d in changed if not self.staged(d)]
        staged = [d for d in changed if self.staged(d)]
        return _Planned(docs, known, todo, _GroupRows.build(todo, self.batch_size) if todo else None, staged)

    def _commit(self, planned: _Planned) -> list[WriteOutcome]:
        docs, known, todo = planned.docs, planned.known, planned.todo
        outcomes = {d.id: WriteOutcome(d.id, "unchanged") for d in docs if known.get(d.id) == d.source.sha256}
        replaced = [d.id for d in todo if d.id in known]  # a staged document clears its old version itself
        if replaced and self.store.read(COUNT_CHUNKS, ids=replaced)[0]["count"] > ATOMIC_DELETE_CHUNKS:
            # An old version too large to delete in the transaction that writes the new one goes first (hidden
            # at once, then deleted in batches); the new one is reported as replaced.
            delete_documents(self.store, replaced)
        for doc in planned.staged:
            try:
                outcomes[doc.id] = self._write_staged(doc, replaced=doc.id in known)
            except Neo4jUnavailable:
                raise
            except (Neo4jError, EmbeddingError) as exc:  # the embedder runs between its batches
                delete_documents(self.store, [doc.id])  # what was written of it: nothing half-written stays
                outcomes[doc.id] = WriteOutcome(doc.id, "failed", error=str(exc).splitlines()[0])
        if planned.rows is not None:
            try:
                outcomes.update(self._write_or_settle(todo, planned.rows, known))
            except Neo4jUnavailable:
                raise
            except Neo4jError:
                if len(todo) == 1:
                    raise
                for doc in todo:  # isolate the failing document; the others still load
                    try:
                        outcomes.update(self._write_or_settle([doc], _GroupRows.build([doc], self.batch_size),
                                                              known))
                    except Neo4jUnavailable:
                        raise
                    except Neo4jError as exc:
                        outcomes[doc.id] = WriteOutcome(doc.id, "failed", error=str(exc).splitlines()[0])
        return [outcomes[d.id] for d in docs]

    def _write_staged(self, doc: PreparedDocument, *, replaced: bool) -> WriteOutcome:
        """A document of more than ``staged_chunks`` chunks, in transactions of ``batch_size`` chunks: the old
        version is deleted (hidden at once, then in batches); the document node and its sections are written
        marked ``loading`` (no content hash yet), then its chunks batch by batch as ``HiddenChunk`` (no
        retrieval index or query sees them), and the last transaction reveals them all, with the tables,
        figures and references. Retrieval sees the whole new version or none of it; an interruption leaves
        the document ``loading``, and the next load of its file writes it again.

        A document whose ``embeddings`` are None is embedded here, a batch at a time, by ``embedder``: the next
        batch's vectors and rows are made while this one is at the server, so the client's embedding (0.7 ms a
        chunk of 1,500 characters with WordLlama) overlaps the server's writes instead of preceding them, and
        only two batches' vectors are held. Its sections' and its own centroids are then set at the reveal. An
        embedding failure fails the document as a write failure does: what was written of it is deleted."""
        size = self.batch_size
        kept: list[str] = []
        if replaced:
            stored = {r["id"] for r in self.store.read(STORED_CHUNKS, ids=[doc.id])}
            new_ids = {c.id for c in doc.chunks}
            kept = sorted(stored & new_ids)
            clear_for_replacement(self.store, doc.id, kept, sorted(stored - new_ids), batch=DELETE_BATCH)
        # Chunk rows a batch at a time: all of a 75,000-chunk document's at once held about 130 MB more.
        rows = _rows([doc], with_chunks=False)
        flat = _flat(rows.documents)
        at, position = _positions(rows.documents[0]), _section_positions(doc.source)
        ids = [c.id for c in doc.chunks]

        def head(tx: Transaction) -> None:
            created = tx.run_batches("graph/create_documents", flat.documents, batch_size=size, encode=on_wire)
            created += tx.run_batches("graph/create_sections", flat.sections, batch_size=size, encode=on_wire)
            if created != 1 + len(flat.sections):
                raise Neo4jError(f"the document statements created {created} of {1 + len(flat.sections)} nodes")
            tx.run("graph/mark_loading", ids=[doc.id])
            tx.run_batches("graph/link_sections", flat.sections, batch_size=size)

        self.store.atomic(head)
        embedder = self.embedder if doc.embeddings is None else None
        centroids = _Centroids()

        def part_rows(start: int) -> list[dict[str, Any]]:
            vectors = None
            if embedder is not None:
                chunks = doc.chunks[start:start + size]
                vectors = embedder.embed([c.text for c in chunks])
                centroids.add(chunks, vectors)
            return _flat_chunks(_chunk_rows(doc, position, start, start + size, vectors), at)

        with ThreadPoolExecutor(max_workers=1) as ahead:
            next_part = ahead.submit(part_rows, 0)
            for start in range(0, len(ids), size):
                part = next_part.result()
                if start + size < len(ids):
                    next_part = ahead.submit(part_rows, start + size)
                links = [{"a": a, "b": b} for a, b in itertools.pairwise(ids[max(0, start - 1):start + size])]

                def body(tx: Transaction, part: list[dict[str, Any]] = part,
                         links: list[dict[str, str]] = links) -> None:
                    tx.run_batches("graph/create_hidden_chunks", part, batch_size=size, encode=on_wire)
                    tx.run_batches("graph/link_hidden_next", links, batch_size=size)

                self.store.atomic(body)
        late = centroids.vectors() if embedder is not None else {}
        late_sections = [{"id": section_id(doc.id, key), "embedding": vector}
                         for key, vector in late.items() if key is not None]
        late_document = [{"id": doc.id, "embedding": late[None]}] if None in late else []

        def reveal(tx: Transaction) -> None:
            shown = tx.run(REVEAL_CHUNKS, id=doc.id)
            if not shown or shown[0]["revealed"] != len(ids):
                raise Neo4jError(f"{doc.id}: {shown[0]['revealed'] if shown else 0} of {len(ids)} chunks "
                                 "were written; the document stays loading and the next load writes it again")
            for name, items in (("graph/create_tables", rows.tables), ("graph/create_figures", rows.figures)):
                made = tx.run_batches(name, items, batch_size=size)
                if made != len(items):
                    raise Neo4jError(f"{name} created {made} of {len(items)} nodes; nothing was written")
            tx.run_batches("graph/link_references", rows.references, batch_size=size)
            tx.run_batches("graph/set_centroids", late_sections, batch_size=size, is_document=False)
            tx.run_batches("graph/set_centroids", late_document, batch_size=size, is_document=True)

        self.store.atomic(reveal)
        return WriteOutcome(doc.id, "replaced" if replaced else "loaded", sections=len(doc.source.sections),
                            chunks=len(doc.chunks), tables=len(doc.source.tables), figures=len(doc.source.figures),
                            kept=len(kept))

    def _write_or_settle(self, docs: list[PreparedDocument], rows: _GroupRows,
                         known: dict[str, str]) -> dict[str, WriteOutcome]:
        """One transaction; if it met a document another transaction stored first (two loads of the same
        files at once, or this run's own commit confirmed only after a retry), nothing of it was written:
        what is now stored with the same content is ``unchanged`` (:data:`LOADED_BY_ANOTHER_RUN`), the rest is
        written once more against what is stored now."""
        try:
            return self._write_group(docs, rows, known)
        except ConflictError:
            now = self.states([d.id for d in docs])
            settled = {d.id: WriteOutcome(d.id, "unchanged", note=LOADED_BY_ANOTHER_RUN)
                       for d in docs if now.get(d.id) == d.source.sha256}
            rest = [d for d in docs if d.id not in settled]
            if rest:
                settled.update(self._write_group(rest, _GroupRows.build(rest, self.batch_size), now))
            return settled

    def _write_group(self, docs: list[PreparedDocument], rows: _GroupRows,
                     known: dict[str, str]) -> dict[str, WriteOutcome]:
        """One transaction. A replaced document's chunks whose text is unchanged (same id) are kept, with what
        was distilled from them alone (:data:`~kg.layers.resource.documents.KEPT_LAYERS`): only its new
        chunks are distilled again, so a one-paragraph edit of a long document costs a few chunks' calls."""
        size = self.batch_size
        replaced = [d.id for d in docs if d.id in known]
        new_ids = {c.id for d in docs if d.id in known for c in d.chunks}
        kept_by_doc: dict[str, int] = {}

        def work(tx: Transaction) -> None:
            # Hidden ones are left to delete_in: a large version's write cut short, deleted whole.
            stored = {r["id"] for r in tx.run(STORED_CHUNKS, ids=replaced) if not r["hidden"]} if replaced else set()
            kept = sorted(stored & new_ids)
            if replaced:
                delete_in(tx, replaced, keep=kept)
            corpus, large, keep_rows = _without_kept(rows, set(kept))
            created = tx.run_batches("graph/create_corpus", corpus, batch_size=size, encode=on_wire)
            for name, items in (("graph/create_documents", large.documents), ("graph/create_sections", large.sections),
                                ("graph/create_chunks", large.chunks)):
                created += tx.run_batches(name, items, batch_size=size, encode=on_wire)
            if created != rows.expected - len(kept):  # never commit half a document
                raise Neo4jError(
                    f"the corpus statements created {created} of {rows.expected - len(kept)} nodes; "
                    "nothing was written")
            placed = sum(tx.run(KEEP_CHUNKS, rows=keep_rows[start:start + size])[0]["count"]
                         for start in range(0, len(keep_rows), size))
            if placed != len(kept):
                raise Neo4jError(f"{placed} of the {len(kept)} unchanged chunks were kept; nothing was written")
            tx.run_batches("graph/link_sections", large.sections, batch_size=size)
            tx.run_batches("graph/link_next", large.next_links, batch_size=size)
            for name, items in (("graph/create_tables", rows.tables), ("graph/create_figures", rows.figures)):
                made = tx.run_batches(name, items, batch_size=size)
                if made != len(items):  # a row whose parent was not matched
                    raise Neo4jError(f"{name} created {made} of {len(items)} nodes; nothing was written")
            tx.run_batches("graph/link_references", rows.references, batch_size=size)
            kept_set = set(kept)
            kept_by_doc.clear()
            kept_by_doc.update({d.id: sum(c.id in kept_set for c in d.chunks) for d in docs if d.id in known})

        self.store.atomic(work)
        return {
            d.id: WriteOutcome(
                d.id, "replaced" if d.id in known else "loaded", sections=len(d.source.sections),
                chunks=len(d.chunks), tables=len(d.source.tables), figures=len(d.source.figures),
                kept=kept_by_doc.get(d.id, 0),
            )
            for d in docs
        }


def _without_kept(rows: _GroupRows, kept: set[str]) -> tuple[list[dict[str, Any]], CorpusRows, list[dict[str, Any]]]:
    """The group's statements when ``kept`` chunks are already stored: a document holding any is written label by
    label (with the large ones), its kept chunks placed by ``graph/keep_chunks`` instead of created. Returns the
    ``graph/create_corpus`` rows, the one-label rows (chunks to create only) and the kept chunks' rows."""
    if not kept:
        return rows.corpus, rows.large, []
    holding = [r for r in rows.corpus if any(c["id"] in kept for c in r["chunks"])]
    moving = {id(r) for r in holding}
    moved = _flat(holding)
    large = CorpusRows(
        documents=rows.large.documents + moved.documents, sections=rows.large.sections + moved.sections,
        chunks=[c for c in rows.large.chunks + moved.chunks if c["id"] not in kept],
        next_links=rows.large.next_links + moved.next_links,
    )
    keep_rows = [{"id": c["id"], "section_id": c["section_id"], "props": c["props"]}
                 for c in rows.large.chunks + moved.chunks if c["id"] in kept]
    return [r for r in rows.corpus if id(r) not in moving], large, keep_rows


def corpus_rows(docs: Sequence[PreparedDocument]) -> CorpusRows:
    """The documents' rows for the one-label statements (the ingest benchmark's naive writer sends these)."""
    return _flat(_rows(docs).documents)
