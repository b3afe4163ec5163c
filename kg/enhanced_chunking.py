"""PIKE-RAG's enhanced chunking (seed section 5.2.1): recurrent splitting with forward summaries.

Within each section, the LLM reads the running summary and the next window of numbered sentences, says
how many of them form the next chunk, and returns the summary updated with it. Chunks keep their verbatim
text, so page and character span stay exact; the forward summary, stored on the chunk, carries what the
chunk's pronouns and references point at. Tables and figures keep their one chunk each and get a summary.
Sections are never crossed, as in structural chunking.

Without an LLM, :class:`~kg.ingest.Ingestor` uses structural chunking only and its report says so.
"""

from __future__ import annotations

from itertools import groupby

from kg.graph.writer import chunk_id
from kg.llm import LLM
from kg.llm.schemas import EnhancedChunk
from loaders import count_tokens, split_sentences
from loaders.models import Chunk, SourceDocument

__all__ = ["enhance_chunks"]


def enhance_chunks(
    doc: SourceDocument, document_id: str, structural: list[Chunk], llm: LLM, *, window_tokens: int = 512
) -> list[Chunk]:
    """Re-split each section's text recurrently; ``structural`` gives the sections' text spans."""
    out: list[Chunk] = []
    summary = ""
    for section_key, group in groupby(structural, key=lambda c: (c.section_key, c.kind)):
        members = list(group)
        key, kind = section_key
        if kind != "text":
            for chunk in members:
                reply = llm.complete_task("enhanced_chunk", summary=summary or "(start)", text=f"1. {chunk.text}")
                assert isinstance(reply, EnhancedChunk)
                summary = reply.summary
                out.append(chunk.model_copy(update={"order": len(out), "summary": summary}))
            continue
        start, end = members[0].char_start, max(c.char_end for c in members)
        sentences = split_sentences(doc.text, start, end)
        pos = 0
        while pos < len(sentences):
            window = _window(doc.text, sentences, pos, window_tokens)
            numbered = "\n".join(f"{i + 1}. {doc.text[a:b]}" for i, (a, b) in enumerate(window))
            reply = llm.complete_task("enhanced_chunk", summary=summary or "(start)", text=numbered)
            assert isinstance(reply, EnhancedChunk)
            take = min(reply.sentences, len(window))
            a, b = window[0][0], window[take - 1][1]
            text = doc.text[a:b]
            summary = reply.summary
            out.append(Chunk(
                id=chunk_id(document_id, len(out), text), document_id=document_id, section_key=key,
                order=len(out), kind="text", text=text, page=_page_at(doc, a), char_start=a, char_end=b,
                tokens=count_tokens(text), summary=summary,
            ))
            pos += take
    return [c if c.kind == "text" else c.model_copy(update={"id": chunk_id(document_id, c.order, c.text)})
            for c in out]


def _window(text: str, sentences: list[tuple[int, int]], pos: int, budget: int) -> list[tuple[int, int]]:
    window: list[tuple[int, int]] = []
    used = 0
    for a, b in sentences[pos:]:
        cost = count_tokens(text[a:b])
        if window and used + cost > budget:
            break
        window.append((a, b))
        used += cost
    return window


def _page_at(doc: SourceDocument, offset: int) -> int | None:
    page = None
    for block in doc.blocks:
        if block.char_start > offset:
            break
        page = block.page
    return page
