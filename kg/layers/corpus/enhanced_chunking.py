"""PIKE-RAG's enhanced chunking (seed section 5.2.1): recurrent splitting with forward summaries.

Within each section, the LLM reads the running summary and the next window of numbered sentences, says
how many of them form the next chunk, and returns the summary updated with it. Chunks keep their verbatim
text, so page and character span stay exact; the forward summary, stored on the chunk, carries what the
chunk's pronouns and references point at. Tables and figures keep their one chunk each and get a summary.
Sections are never crossed, as in structural chunking.

A chunk is at least ``min_tokens`` long (the sentence that reaches it ends the chunk) unless its section
ends first: a small model asked for a split may take one sentence at a time (qwen2.5-coder-0.5b did on
technical Markdown: 115 chunks of 20 tokens where structural chunking made 25), which multiplies the calls
and leaves chunks too short to answer anything.

A window whose reply is cut off at the token limit is halved and asked again (down to one sentence); a
window whose reply stays unusable becomes a chunk of about half the window with the summary unchanged, so
a model's bad answer costs one chunk's split, never the document. An endpoint that is down, a spent budget
or a wrong setting still stops the load (those errors are not per-chunk).

Without an LLM, :class:`~kg.layers.corpus.ingest.Ingestor` uses structural chunking only and its report says so.
"""

from __future__ import annotations

from itertools import groupby

from kg.errors import LLMOutputError, LLMTruncatedError
from kg.llm import ENHANCED_CHUNK, LLM, EnhancedChunk
from kg.shared.ids import chunk_ids
from loaders import count_tokens, split_sentences
from loaders.models import Chunk, SourceDocument

__all__ = ["enhance_chunks"]


def enhance_chunks(
    doc: SourceDocument, document_id: str, structural: list[Chunk], llm: LLM, *, window_tokens: int = 512,
    min_tokens: int = 0,
) -> list[Chunk]:
    """Re-split each section's text recurrently; ``structural`` gives the sections' text spans. A chunk the
    model cuts shorter than ``min_tokens`` runs on to the sentence that reaches it."""
    out: list[Chunk] = []
    summary = ""
    for section_key, group in groupby(structural, key=lambda c: (c.section_key, c.kind)):
        members = list(group)
        key, kind = section_key
        if kind != "text":
            for chunk in members:
                try:
                    reply = _ask(llm, summary, f"1. {chunk.text}")
                except LLMTruncatedError:  # a table cannot be split: it keeps the summary so far
                    reply = None
                summary = reply.summary if reply is not None else summary
                out.append(chunk.model_copy(update={"order": len(out), "summary": summary}))
            continue
        start, end = members[0].char_start, max(c.char_end for c in members)
        sentences = split_sentences(doc.text, start, end)
        pos = 0
        while pos < len(sentences):
            budget = window_tokens
            while True:
                window = _window(doc.text, sentences, pos, budget)
                numbered = "\n".join(f"{i + 1}. {doc.text[a:b]}" for i, (a, b) in enumerate(window))
                try:
                    reply = _ask(llm, summary, numbered)
                except LLMTruncatedError:
                    if len(window) == 1:
                        reply = None
                        break
                    budget //= 2  # split the input: a shorter window needs a shorter reply
                    continue
                break
            if reply is None:
                window = _window(doc.text, sentences, pos, min(budget, window_tokens // 2))
                take = len(window)
            else:
                take = min(reply.sentences, len(window))
                summary = reply.summary
            while take < len(window) and count_tokens(doc.text[window[0][0]:window[take - 1][1]]) < min_tokens:
                take += 1
            a, b = window[0][0], window[take - 1][1]
            text = doc.text[a:b]
            out.append(Chunk(
                id="", document_id=document_id, section_key=key,
                order=len(out), kind="text", text=text, page=_page_at(doc, a), char_start=a, char_end=b,
                tokens=count_tokens(text), summary=summary,
            ))
            pos += take
    ids = chunk_ids(document_id, (c.text for c in out))
    return [c.model_copy(update={"id": i}) for c, i in zip(out, ids, strict=True)]


def _ask(llm: LLM, summary: str, numbered: str) -> EnhancedChunk | None:
    """The model's split of one window; None when its reply stayed unusable (it was counted as failed).

    Raises LLMTruncatedError for the caller to split the window.
    """
    try:
        return llm.run(ENHANCED_CHUNK, summary=summary or "(start)", text=numbered)
    except LLMTruncatedError:
        raise
    except LLMOutputError:  # counted as failed by the client; the caller splits by size instead
        return None


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
