"""Readable text for each MCP result: what a model or a person reads next to the structured content.

Every location is written the same way, ``Title, page P, characters A-B (chunk ID)``, so a reader can cite it
as it stands and fetch more with ``get_chunk``.
"""

from __future__ import annotations

from kg.app.mcp.models import (
    AskResult,
    ChunkResult,
    DeleteResult,
    DocumentsResult,
    EntityResult,
    LoadResult,
    Outline,
    SearchResult,
)

__all__ = ["ask_text", "chunk_text", "delete_text", "documents_text", "entity_text", "load_text", "outline_text",
           "search_text", "where"]


def where(title: str, page: int | None, start: int, end: int, chunk_id: str | None = None) -> str:
    """``Title, page P, characters A-B (chunk ID)``; the page only when the format has pages."""
    text = f"{title}{f', page {page}' if page else ''}, characters {start}-{end}"
    return f"{text} (chunk {chunk_id})" if chunk_id else text


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.strip().splitlines())


def _more(next_offset: int | None) -> str:
    return f"\n\nMore results: call again with offset={next_offset}." if next_offset is not None else ""


def search_text(r: SearchResult) -> str:
    if not r.hits:
        return (f"No hits for {r.question!r} (method {r.method}, knowledge base {r.kb!r})"
                + (" past this offset." if r.offset else "."))
    head = (f"Hits {r.offset + 1}-{r.offset + len(r.hits)} for {r.question!r} "
            f"(method {r.method}, knowledge base {r.kb!r}):")
    blocks = [head]
    for h in r.hits:
        blocks.append(f"[{h.rank}] {where(h.title, h.page, h.char_start, h.char_end, h.chunk_id)}\n"
                      f"score {h.score:.3f}; found by: {h.how_found or 'ranking'}\n{_quote(h.text)}")
    return "\n\n".join(blocks) + _more(r.next_offset)


def ask_text(r: AskResult) -> str:
    mode = " (offline: extractive, no LLM configured)" if r.offline else ""
    lines = [f"Answer ({r.method}{', ' + r.question_class if r.question_class else ''}){mode}:", r.answer]
    if r.supporting_sentence and r.supporting_sentence not in r.answer:
        lines.append(f"Taken from: \"{r.supporting_sentence}\"")
    lines.append("")
    if r.citations:
        lines.append("Citations:")
        for c in r.citations:
            lines.append(f"[{c.marker}] {where(c.title, c.page, c.char_start, c.char_end, c.chunk_id)}")
            lines.append(_quote(c.quote))
    elif r.evidence:
        lines.append("No citations; the evidence found:")
        for n, e in enumerate(r.evidence, start=1):
            lines.append(f"evidence {n}: {where(e.title, e.page, e.char_start, e.char_end, e.chunk_id)} "
                         f"(score {e.score:.3f}): {e.snippet}")
    else:
        lines.append("No evidence was found.")
    if r.dropped_markers:
        lines.append(f"Markers removed because they pointed at no evidence: {r.dropped_markers}")
    if r.unsupported_citations:
        lines.append(f"Citations removed because the cited chunk does not support the sentence: "
                     f"{r.unsupported_citations}")
    if r.abstained:
        lines.append("Abstained: no source supports an answer.")
    if r.trace:
        lines += ["", "Trace:"] + [f"{t.index}. {t.kind}: {t.summary}" for t in r.trace]
    if r.stop_reason:
        lines.append(f"Stopped: {r.stop_reason}")
    return "\n".join(lines)


def documents_text(r: DocumentsResult) -> str:
    if not r.documents:
        return f"Knowledge base {r.kb!r} holds {r.total} documents" + (" (none past this offset)." if r.total else ".")
    lines = [f"Documents {r.offset + 1}-{r.offset + len(r.documents)} of {r.total} in knowledge base {r.kb!r}:"]
    for d in r.documents:
        pages = f", {d.pages} pages" if d.pages else ""
        lines.append(f"- {d.title} [{d.format}{pages}, {d.chunks} chunks] id {d.id}; source {d.source}")
    return "\n".join(lines) + _more(r.next_offset)


def chunk_text(r: ChunkResult) -> str:
    path = " > ".join(r.section_path) or r.title
    lines = [f"{where(r.title, r.page, r.char_start, r.char_end, r.chunk_id)}", f"Section: {path}", "", r.text]
    for label, chunks in (("Before it", r.previous), ("After it", r.next)):
        for n in chunks:
            lines += ["", f"{label}: {where(r.title, n.page, n.char_start, n.char_end, n.chunk_id)}", n.text]
    return "\n".join(lines)


def entity_text(r: EntityResult) -> str:
    e = r.entity
    also = f"; also called {', '.join(e.aliases)}" if e.aliases else ""
    lines = [f"{e.name} ({e.type or 'entity'}, id {e.id}{also}): {e.facts} facts, mentioned in {e.mentions} chunks."]
    if r.facts:
        lines += ["", f"Facts {r.offset + 1}-{r.offset + len(r.facts)}:"]
        lines += [f"- {f.head} --{f.relation}--> {f.tail} (chunk {f.chunk_id})" for f in r.facts]
    if r.chunks:
        lines += ["", "Stated in:" if r.facts else "Mentioned in:"]
        for c in r.chunks:
            lines += [f"- {where(c.title, c.page, c.char_start, c.char_end, c.chunk_id)}", _quote(c.text)]
    if r.others:
        lines += ["", "Other matches: " + ", ".join(f"{o.name} ({o.facts} facts)" for o in r.others)]
    return "\n".join(lines) + _more(r.next_offset)


def outline_text(r: Outline) -> str:
    d = r.document
    pages = f", {d.pages} pages" if d.pages else ""
    lines = [f"# {d.title}", "", f"Document {d.id} ({d.format}{pages}, {d.chunks} chunks), source {d.source}", ""]
    for s in r.sections:
        if s.level == 0 and not s.chunk_ids:
            continue  # the document's root section: its title is the heading above
        page = f" (page {s.page})" if s.page else ""
        chunks = f": chunks {', '.join(s.chunk_ids)}" if s.chunk_ids else ""
        lines.append(f"{'  ' * max(s.level - 1, 0)}- {s.title or '(untitled)'}{page}{chunks}")
    return "\n".join(lines)


def load_text(r: LoadResult) -> str:
    lines = [f"Knowledge base {r.kb!r}: {r.loaded} loaded, {r.replaced} replaced, {r.unchanged} unchanged, "
             f"{r.failed} failed in {r.seconds:.1f} s"
             + (f"; distilled layers built: {', '.join(r.distilled)}." if r.distilled else ".")]
    for f in r.files:
        detail = f": {f.error}" if f.error else f" as {f.document_id} ({f.chunks} chunks)" if f.document_id else ""
        lines.append(f"- {f.path}: {f.status}{detail}")
    return "\n".join(lines)


def delete_text(r: DeleteResult) -> str:
    d = r.deleted
    return f"Deleted {d.title} (id {d.id}, {d.chunks} chunks, source {d.source}) from knowledge base {r.kb!r}."
