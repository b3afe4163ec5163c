"""Loading files into the graph: parse, chunk, embed, write; one report entry per file.

A file is parsed whole before anything of it is written, so a parse error leaves nothing of it in the
graph. Its documents are then written in groups (see :mod:`kg.layers.corpus.writer`); each document commits
atomically, and a failing file never stops the others. A file that holds many documents (a QA corpus)
also drops the documents it no longer holds. Once written, documents are linked to the loaded documents
whose titles they mention and that mention theirs (see :mod:`kg.layers.resource.references`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from kg.embeddings import Embedder
from kg.errors import (
    BudgetExceededError,
    ConfigError,
    LLMError,
    LLMOutputError,
    LoaderError,
    Neo4jUnavailable,
    StrataError,
)
from kg.layers.corpus.enhanced_chunking import enhance_chunks
from kg.layers.corpus.writer import (
    GROUP_CHUNKS,
    DocumentWriter,
    PreparedDocument,
    WriteOutcome,
    document_groups,
)
from kg.layers.resource.documents import delete_documents
from kg.layers.resource.references import link_title_mentions
from kg.llm import LLM, LLMReport
from kg.shared.ids import document_id
from kg.shared.redaction import redact
from kg.store.base import GraphStore
from kg.store.queries import FILE_DOCUMENTS
from loaders import chunk_document, discover, load_path
from loaders.models import SourceDocument
from loaders.registry import Skipped

__all__ = [
    "PENDING_HINT", "FileReport", "FileStatus", "Ingestor", "LoadReport", "find_files",
    "prepare_structural",
]

Progress = Callable[[Path, int, int], None]
PENDING_HINT = ("chunks are not distilled yet: `strata distill` (or `strata load` again, or Strata.distill()) "
                "finishes them")


FileStatus = Literal["loaded", "unchanged", "replaced", "failed", "skipped"]
"""How one file ended: written (``loaded``, ``replaced``), already in the graph (``unchanged``), refused
(``failed``) or not a file Strata reads (``skipped``)."""


@dataclass
class FileReport:
    path: str
    status: FileStatus
    error: str | None = None
    document_id: str | None = None
    documents: int = 0
    sections: int = 0
    chunks: int = 0
    tables: int = 0
    figures: int = 0
    removed: int = 0
    # Chunks of a replaced document whose text is unchanged: kept with what was distilled from them alone
    # (KEPT_LAYERS), so they are not distilled again (``chunks`` counts them too).
    kept_chunks: int = 0
    seconds: float = 0.0
    # Why a file ended as it did when its status alone does not say (skipped; loaded by another run).
    note: str | None = None
    # What was recovered rather than refused (an encoding guessed); the file is loaded.
    warnings: list[str] = field(default_factory=list)


@dataclass
class LoadReport:
    files: list[FileReport] = field(default_factory=list)
    seconds: float = 0.0
    chunking: str = "structural"
    llm: LLMReport | None = None
    # Chunks per distilled layer still to distil after this load (set by the client); finished by `strata
    # distill` (``Strata.distill``). None: not known.
    pending: dict[str, int] | None = None

    @property
    def failed(self) -> int:
        return sum(f.status == "failed" for f in self.files)

    def summary(self) -> dict[str, Any]:
        counts = {s: sum(f.status == s for f in self.files)
                  for s in get_args(FileStatus)}
        return {**counts, "seconds": round(self.seconds, 3)}

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "files": [asdict(f) for f in self.files], "summary": self.summary(), "chunking": self.chunking,
        }
        if self.llm is not None:
            data["llm"] = self.llm.to_json()
        if self.pending is not None:
            data["pending"] = self.pending
            if any(self.pending.values()):
                data["pending_hint"] = PENDING_HINT
        return data


def _file_status(outcomes: Sequence[WriteOutcome]) -> FileStatus:
    statuses = {o.status for o in outcomes}
    precedence: tuple[FileStatus, ...] = ("failed", "replaced", "loaded")
    for status in precedence:
        if status in statuses:
            return status
    return "unchanged"


def find_files(paths: Iterable[Path], include: Sequence[str] = (), exclude: Sequence[str] = (),
               skipped: Skipped | None = None) -> list[Path]:
    return discover(list(paths), include=list(include) or None, exclude=list(exclude), skipped=skipped)


def prepare_structural(doc: SourceDocument, chunk_tokens: int, chunk_overlap: int) -> PreparedDocument:
    did = document_id(doc.source)
    return PreparedDocument(did, doc, chunk_document(doc, did, max_tokens=chunk_tokens, overlap=chunk_overlap))


class Ingestor:
    """Parse, chunk, embed and write files. The store and embedder are injected.

    Example::

        report = Ingestor(store, embedder).load([Path("docs/")], include=["*.pdf"])
        print(report.summary())
    """

    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        *,
        batch_size: int = 1000,
        chunk_tokens: int = 256,
        chunk_overlap: int = 32,
        group_chunks: int = GROUP_CHUNKS,
        password: str | None = None,
        llm: LLM | None = None,
    ) -> None:
        self.writer = DocumentWriter(store, batch_size=batch_size, staged_chunks=group_chunks, embedder=embedder)
        self.embedder = embedder
        self.chunk_tokens = chunk_tokens
        self.chunk_overlap = chunk_overlap
        self.group_chunks = group_chunks
        self.password = password
        self.llm = llm if llm is not None and not llm.offline else None


    def load(
        self,
        paths: Iterable[Path],
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        progress: Progress | None = None,
    ) -> LoadReport:
        started = time.perf_counter()
        report = LoadReport(chunking="enhanced (LLM)" if self.llm else "structural (offline: no LLM configured)")
        skipped: Skipped = []
        files = find_files(paths, include, exclude, skipped)
        # Absolute paths: a document's id derives from its source, whichever relative path named it.
        files = [f.resolve() for f in files]
        for n, path in enumerate(files):
            report.files.append(self.load_file(path))
            if progress is not None:
                progress(path, n + 1, len(files))
        report.files += [FileReport(path=str(path.absolute()), status="skipped", note=why) for path, why in skipped]
        report.seconds = time.perf_counter() - started
        if self.llm is not None:
            report.llm = self.llm.accounting.report()
        return report

    def load_file(self, path: Path) -> FileReport:
        started = time.perf_counter()
        entry = FileReport(path=str(path), status="failed")
        try:
            docs = [self.prepare(doc) for doc in load_path(path, password=self.password)]
            if not docs:
                raise LoaderError(str(path), "no text could be extracted")
            outcomes = self.write(docs)
            entry.removed = self._drop_stale(str(path), {d.id for d in docs})
        except (Neo4jUnavailable, BudgetExceededError, ConfigError):
            raise
        except LLMError as exc:
            # An endpoint that is down or refuses every request fails every later file too: stop the job.
            # A model's bad output is per chunk and never reaches here (enhanced chunking absorbs it).
            if not isinstance(exc, LLMOutputError):
                raise
            entry.error = f"{path}: {exc}".splitlines()[0]
        except StrataError as exc:
            # A LoaderError already names the file; the report's error is one line either way.
            message = str(exc) if isinstance(exc, LoaderError) else f"{path}: {exc}"
            entry.error = redact(message.splitlines()[0])  # may quote an endpoint's reply
        else:
            entry.status = _file_status(outcomes)
            if entry.removed and entry.status == "unchanged":
                entry.status = "replaced"
            entry.error = next((o.error for o in outcomes if o.error), None)
            entry.note = next((o.note for o in outcomes if o.note), None)
            entry.warnings = list(dict.fromkeys(
                d.source.metadata["encoding_warning"] for d in docs if "encoding_warning" in d.source.metadata))
            entry.documents = len(outcomes)
            entry.document_id = outcomes[0].document_id if len(outcomes) == 1 else None
            written = [o for o in outcomes if o.status in ("loaded", "replaced")]
            entry.sections = sum(o.sections for o in written)
            entry.chunks = sum(o.chunks for o in written)
            entry.tables = sum(o.tables for o in written)
            entry.figures = sum(o.figures for o in written)
            entry.kept_chunks = sum(o.kept for o in written)
        entry.seconds = round(time.perf_counter() - started, 4)
        return entry

    def _drop_stale(self, file: str, kept: set[str]) -> int:
        """Delete the documents an earlier version of ``file`` held and this one does not (passages removed
        from a QA corpus); returns how many."""
        stale = [r["id"] for r in self.writer.store.read(FILE_DOCUMENTS, file=file) if r["id"] not in kept]
        if stale:
            delete_documents(self.writer.store, stale)
        return len(stale)

    def prepare(self, doc: SourceDocument) -> PreparedDocument:
        """Structural chunks; enhanced chunking waits for :meth:`write`, which knows what changed."""
        return prepare_structural(doc, self.chunk_tokens, self.chunk_overlap)

    def write(self, docs: list[PreparedDocument]) -> list[WriteOutcome]:
        """Re-chunk with the LLM (when configured) and embed only what changed, then write in groups of
        about ``group_chunks`` chunks. The sha256 check comes first so an unchanged file costs no LLM
        call; every changed document is enhanced before the first group is written, so a budget stop
        leaves nothing of the file behind. Title mentions are linked last, for every document awaiting it
        (this file's, and any an interrupted load left)."""
        known = self.writer.states([d.id for d in docs])
        if self.llm is not None:
            for doc in docs:
                if known.get(doc.id) != doc.source.sha256:
                    doc.chunks = enhance_chunks(doc.source, doc.id, doc.chunks, self.llm,
                                                window_tokens=2 * self.chunk_tokens,
                                                min_tokens=self.chunk_tokens // 2)
        outcomes = self.writer.write_many(self._embedded(docs, known))
        unlinked: dict[str, str] = {}
        link_title_mentions(self.writer.store, failed=unlinked)
        # Only this file's documents can fail this file; others (left pending by an interrupted load) are
        # marked in the graph and no longer pending, so they fail no later load.
        mine = [o for o in outcomes if o.document_id in unlinked and o.status in ("loaded", "replaced")]
        if mine:
            delete_documents(self.writer.store, [o.document_id for o in mine])
            for o in mine:
                o.status = "failed"
                o.error = (f"{o.document_id} could not be indexed for title links, so it was not kept: "
                           f"{unlinked[o.document_id]}")
        return outcomes

    def _embedded(self, docs: list[PreparedDocument], known: dict[str, str]) -> Iterator[list[PreparedDocument]]:
        """The writer's groups, each embedded (what changed of it) only when the writer takes it: while the
        previous group is at the server, never more than one group ahead. A document the writer stages is
        embedded by the writer, a batch at a time."""
        for group in document_groups(docs, self.group_chunks):
            self._embed([d for d in group if known.get(d.id) != d.source.sha256 and not self.writer.staged(d)])
            yield group

    def _embed(self, docs: list[PreparedDocument]) -> None:
        texts = [c.text for d in docs for c in d.chunks]
        if texts:
            vectors = self.embedder.embed(texts)
            offset = 0
            for doc in docs:
                doc.embeddings = vectors[offset:offset + len(doc.chunks)]
                offset += len(doc.chunks)
