"""What the MCP tools do, over one connected :class:`kg.app.client.Strata` client, independent of the protocol.

Each function takes the client and already schema-checked arguments, checks what a schema cannot (a blank
question, a document that does not exist, a path outside the load roots) and returns a typed result from
:mod:`kg.app.mcp.models`. Problems are raised as :class:`ToolInputError` (the caller's to fix) or as the
client's own :class:`~kg.errors.StrataError`; :mod:`kg.app.mcp.server` turns both into tool errors.

Example::

    with Strata.connect(kb="demo") as kb:
        result = search(kb, "gearbox oil sampling interval", k=3)
        print([(h.title, h.page, h.char_start, h.char_end) for h in result.hits])
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from kg.app.client import Strata
from kg.app.mcp.models import (
    AskResult,
    ChunkResult,
    ChunkView,
    CitationView,
    DeleteResult,
    DocumentsResult,
    EntityResult,
    EntityView,
    EvidenceChunk,
    EvidenceView,
    FactView,
    FoundBy,
    LoadedFile,
    LoadResult,
    Outline,
    OutlineSection,
    SearchFilters,
    SearchHit,
    SearchResult,
    TraceSummary,
)
from kg.app.rest.views import cited_span
from kg.errors import StrataError
from kg.retrieval.base import Hit, RetrievalFilter
from kg.shared.private import owned_dir
from kg.store.lucene import escape_lucene, lucene_query
from kg.store.queries import (
    CHUNK_CONTEXT,
    COUNT_LABEL,
    DOCUMENT_OUTLINE,
    ENTITY_FACTS,
    ENTITY_MENTIONS,
    FIND_ENTITIES,
    EvidenceColumns,
)
from reasoning.types import Answer, TraceStep

__all__ = [
    "DISTILL_AFTER_LOAD", "MAX_SEARCH_DEPTH", "ToolInputError", "ask", "delete", "document_outline", "explain_entity",
    "get_chunk", "list_documents", "load_paths", "load_text", "search",
]

MAX_SEARCH_DEPTH = 100
"""Hits a search can reach across all its pages (offset + k)."""
DISTILL_AFTER_LOAD = ("atoms", "triples")
"""The distilled layers ``load`` builds for new and changed documents (as ``strata load`` does by default)."""
_SNIPPET = 300
_TRACE_DETAIL = 240
_UNSAFE_NAME = re.compile(r"[^\w.\- ]")


class ToolInputError(StrataError):
    """A tool's arguments are well-formed but cannot be served (names what to change)."""


def _question(text: str) -> str:
    question = " ".join(text.split())
    if not question:
        raise ToolInputError("the question is empty: ask something")
    return question


def _found_by(hit: Hit) -> list[FoundBy]:
    return [FoundBy(path=s.path, score=round(s.score, 4), via=s.via) for s in hit.sources]


def search(kb: Strata, question: str, *, k: int = 5, method: str = "strata", filters: SearchFilters | None = None,
           offset: int = 0) -> SearchResult:
    """The chunks that best answer ``question``: hits ``offset+1`` to ``offset+k`` of the method's ranking."""
    text = _question(question)
    if offset + k > MAX_SEARCH_DEPTH:
        raise ToolInputError(f"offset + k is {offset + k}; a search reaches at most {MAX_SEARCH_DEPTH} hits "
                             "(narrow it with filters instead)")
    where = _filter(kb, filters) if filters else None
    hits = kb.retrieve(text, method=method, k=offset + k, where=where)
    page = hits[offset:offset + k]
    more = len(hits) == offset + k and offset + k < MAX_SEARCH_DEPTH
    return SearchResult(
        kb=kb.settings.kb, question=text, method=method, offset=offset, next_offset=offset + k if more else None,
        hits=[SearchHit(rank=offset + i, chunk_id=h.chunk_id, document_id=h.document_id, title=h.title,
                        source=h.source, page=h.page, char_start=h.char_start, char_end=h.char_end,
                        score=round(h.score, 4), text=h.text, found_by=_found_by(h), how_found=h.explain())
              for i, h in enumerate(page, start=1)],
    )


def _filter(kb: Strata, filters: SearchFilters) -> RetrievalFilter:
    ids: list[str] | None = None
    if filters.documents is not None:
        ids = []
        for key in filters.documents:
            doc = kb.find(key)
            if doc is None:
                raise ToolInputError(f"filters.documents: no document with id or source {key!r} "
                                     "(list_documents shows them)")
            ids.append(doc.id)
    for entry in filters.metadata or []:
        if "=" not in entry:
            raise ToolInputError(f"filters.metadata: {entry!r} is not 'key=value'")
    return RetrievalFilter(document_ids=ids, formats=filters.formats, metadata=filters.metadata,
                           exclude_chunk_ids=list(filters.exclude_chunks))


def ask(kb: Strata, question: str, *, method: str = "auto") -> AskResult:
    """Answer ``question`` with citations placed in their chunks, the evidence and a summary of the trace."""
    answer = kb.ask(_question(question), method=method)
    return answer_result(kb.settings.kb, answer)


def answer_result(kb_name: str, answer: Answer) -> AskResult:
    """The tool's view of an :class:`~reasoning.types.Answer`: each citation's quote is cut from its chunk."""
    citations = []
    for c in answer.citations:
        span = cited_span(c, answer.evidence)
        start, end = span.highlight
        citations.append(CitationView(
            marker=c.marker, chunk_id=c.chunk_id, document_id=c.document_id, title=c.title, source=c.source,
            page=c.page, char_start=c.char_start, char_end=c.char_end, quote=span.chunk_text[start:end],
            quote_start=start, quote_end=end, claims=list(c.claims)))
    return AskResult(
        kb=kb_name, question=answer.question, answer=answer.answer, method=answer.method,
        question_class=answer.question_class, offline=answer.offline,
        supporting_sentence=answer.supporting_sentence, citations=citations,
        evidence=[EvidenceView(chunk_id=h.chunk_id, title=h.title, page=h.page, char_start=h.char_start,
                               char_end=h.char_end, score=round(h.score, 4), snippet=_snippet(h.text))
                  for h in answer.evidence],
        trace=[_trace(step) for step in answer.trace], stop_reason=answer.stop_reason,
        dropped_markers=list(answer.dropped_markers), unsupported_citations=answer.unsupported_citations,
        abstained=answer.abstained, llm_calls=answer.usage.calls, llm_tokens=answer.usage.tokens,
    )


def _snippet(text: str, width: int = _SNIPPET) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 3].rstrip() + "..."


def _trace(step: TraceStep) -> TraceSummary:
    parts = []
    for key, value in step.detail.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        parts.append(f"{key}={_snippet(shown, 80)}")
    return TraceSummary(index=step.index, kind=step.kind, summary=_snippet("; ".join(parts), _TRACE_DETAIL))


def list_documents(kb: Strata, *, offset: int = 0, limit: int = 50) -> DocumentsResult:
    """A page of the loaded documents, ordered by source, with the total count."""
    total = int(kb.store.read(COUNT_LABEL.render(label="Document"))[0]["count"])
    docs = kb.documents(skip=offset, limit=limit)
    more = offset + len(docs) < total
    return DocumentsResult(kb=kb.settings.kb, documents=docs, total=total, offset=offset,
                           next_offset=offset + len(docs) if more and docs else None)


def get_chunk(kb: Strata, chunk_id: str, *, neighbours: int = 1) -> ChunkResult:
    """A chunk's text with its section path and the ``neighbours`` chunks on each side."""
    rows = kb.store.read(CHUNK_CONTEXT, id=chunk_id.strip(), window=neighbours)
    if not rows:
        raise ToolInputError(f"no chunk with id {chunk_id!r} (chunk ids come from search, ask and the outlines)")
    row = rows[0]
    around = [ChunkView.model_validate(n) for n in row["neighbours"] if n.get("text") is not None]
    return ChunkResult(
        kb=kb.settings.kb, chunk_id=row["chunk_id"], document_id=row["document_id"], title=row["title"] or "",
        source=row["source"], page=row["page"], char_start=row["char_start"], char_end=row["char_end"],
        order=row["order"], kind=row["kind"], text=row["text"], section_path=_dedupe(row["section_path"]),
        previous=[n for n in around if n.order < row["order"]], next=[n for n in around if n.order > row["order"]],
    )


def _dedupe(titles: Sequence[str]) -> list[str]:
    """Section titles without a repeat of the one above (a document's root and its first heading often agree)."""
    out: list[str] = []
    for title in titles:
        if not out or out[-1] != title:
            out.append(title)
    return out


def explain_entity(kb: Strata, name: str, *, offset: int = 0, limit: int = 20) -> EntityResult:
    """The entity best matching ``name``, a page of its facts, and the chunks that state them."""
    wanted = " ".join(name.split())
    if not wanted:
        raise ToolInputError("the entity name is empty")
    query = lucene_query(wanted) or escape_lucene(wanted)
    rows = kb.store.read(FIND_ENTITIES, query=query, wanted=wanted, limit=25)
    if not rows:
        raise ToolInputError(f"no entity matches {wanted!r}; entities exist once the distilled layer is built "
                             "(strata distill), and search finds text that names no entity")
    found = [EntityView(id=r["id"], name=r["name"], type=r["type"], aliases=list(r["aliases"]), facts=r["facts"],
                        mentions=r["mentions"]) for r in rows]
    entity = found[0]
    facts = kb.store.read(ENTITY_FACTS, id=entity.id, skip=offset, limit=limit)
    chunks: dict[str, EvidenceChunk] = {}
    for row in facts:
        chunks.setdefault(row["chunk_id"], _evidence(row))
    if entity.facts == 0:
        for mention in kb.store.read(ENTITY_MENTIONS, id=entity.id, limit=limit):
            chunks.setdefault(mention["chunk_id"], _evidence(mention))
    more = offset + len(facts) < entity.facts
    return EntityResult(
        kb=kb.settings.kb, query=wanted, entity=entity, others=found[1:10],
        facts=[FactView(fact_id=r["fact_id"], head=r["head"], relation=r["relation"], tail=r["tail"],
                        text=r["text"], role=r["role"], method=r["method"], chunk_id=r["chunk_id"]) for r in facts],
        chunks=list(chunks.values()), offset=offset, next_offset=offset + len(facts) if more and facts else None,
    )


def _evidence(row: EvidenceColumns) -> EvidenceChunk:
    return EvidenceChunk(chunk_id=row["chunk_id"], document_id=row["document_id"], title=row["title"] or "",
                         source=row["source"], page=row["page"], char_start=row["char_start"],
                         char_end=row["char_end"], text=row["chunk_text"])


def document_outline(kb: Strata, key: str) -> Outline:
    """A document (by id or source path) and its sections in reading order, each with its chunk ids."""
    doc = kb.find(key)
    if doc is None:
        raise ToolInputError(f"no document with id or source {key!r}")
    sections = [OutlineSection(**row) for row in kb.store.read(DOCUMENT_OUTLINE, id=doc.id)]
    return Outline(kb=kb.settings.kb, document=doc, sections=sections)


def load_paths(kb: Strata, paths: Sequence[str], *, roots: Sequence[Path]) -> LoadResult:
    """Load files or folders from this machine, each inside one of ``roots``, then distil what changed."""
    if not paths:
        raise ToolInputError("paths is empty: name at least one file or folder")
    if not roots:
        raise ToolInputError("this server loads no paths (it was started without a load root); send text instead")
    resolved = []
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = roots[0] / path
        path = path.resolve()
        if not any(path.is_relative_to(root) for root in roots):
            raise ToolInputError(f"{raw!r} is outside the folders this server may load from: "
                                 f"{', '.join(str(r) for r in roots)} (strata mcp --load-root)")
        if not path.exists():
            raise ToolInputError(f"{raw!r} does not exist (resolved to {path})")
        resolved.append(path)
    return _load(kb, resolved)


def load_text(kb: Strata, text: str, *, title: str, folder: Path) -> LoadResult:
    """Load ``text`` as a Markdown document titled ``title``; loading the same title again replaces it.

    The text is written to ``folder/<kb>/<title>.md`` (a folder only this user can enter), loaded, and
    removed again; the document keeps that path as its source, so ``delete`` finds it by it too.
    """
    if not text.strip():
        raise ToolInputError("text is empty")
    name = _UNSAFE_NAME.sub("_", " ".join(title.split())).strip(" .")
    if not name:
        raise ToolInputError(f"title {title!r} has no letters or digits to name the document by")
    target = owned_dir(owned_dir(folder, "text folder") / kb.settings.kb, "text folder") / f"{name[:120]}.md"
    body = text if text.lstrip().startswith("# ") else f"# {' '.join(title.split())}\n\n{text}"
    target.unlink(missing_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(body)
    try:
        return _load(kb, [target])
    finally:
        target.unlink(missing_ok=True)


def _load(kb: Strata, paths: list[Path]) -> LoadResult:
    report = kb.load(paths)
    changed = [f.document_id for f in report.files if f.status in ("loaded", "replaced") and f.document_id]
    distilled: list[str] = []
    if changed:
        kb.distill(layers=list(DISTILL_AFTER_LOAD), document_ids=changed)
        distilled = list(DISTILL_AFTER_LOAD)
    counts = report.summary()
    return LoadResult(
        kb=kb.settings.kb, files=[LoadedFile(path=f.path, status=f.status, error=f.error, document_id=f.document_id,
                                             documents=f.documents, chunks=f.chunks) for f in report.files],
        loaded=counts["loaded"], replaced=counts["replaced"], unchanged=counts["unchanged"], failed=counts["failed"],
        distilled=distilled, seconds=round(report.seconds, 3),
    )


def delete(kb: Strata, key: str) -> DeleteResult:
    """Delete a document (by id or source path) and everything derived only from it."""
    if kb.find(key) is None:
        raise ToolInputError(f"no document with id or source {key!r} (list_documents shows them)")
    return DeleteResult(kb=kb.settings.kb, deleted=kb.delete(key))
