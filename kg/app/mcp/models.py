"""What the MCP tools take and return: typed models, published as the tools' input and output schemas.

Every tool result is one of the ``*Result`` models below, sent as structured content (checked against the
tool's output schema) together with a readable rendering of the same data (:mod:`kg.app.mcp.render`).
Locations are the same everywhere: a chunk id, its document's title and source, the 1-based page (``null``
for formats without pages) and the character span ``[char_start, char_end)`` in the document's text.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kg.app.client import DocumentInfo

__all__ = [
    "AskResult", "ChunkResult", "ChunkView", "CitationView", "DeleteResult", "DocumentsResult", "EntityResult",
    "EntityView", "EvidenceChunk", "EvidenceView", "FactView", "FoundBy", "LoadResult", "LoadedFile", "Outline",
    "OutlineSection",
    "SearchFilters", "SearchHit", "SearchResult", "TraceSummary",
]


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class _Located(_Out):
    """Where a piece of evidence is: its chunk and document, page and character span in the document."""

    chunk_id: str
    document_id: str
    title: str
    source: str | None
    page: int | None
    char_start: int
    char_end: int


class SearchFilters(BaseModel):
    """Restrict a search to some documents, formats or metadata."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    documents: list[str] | None = Field(
        None, max_length=200, description="Only these documents: ids from list_documents, or source paths.")
    formats: list[str] | None = Field(
        None, max_length=20, description="Only documents of these formats, e.g. 'pdf', 'markdown', 'html', 'text'.")
    metadata: list[str] | None = Field(
        None, max_length=20, description="Only documents carrying all these metadata entries, as 'key=value'.")
    exclude_chunks: list[str] = Field(
        default_factory=list, max_length=500, description="Chunk ids to leave out (e.g. ones already read).")


class FoundBy(_Out):
    """One retrieval path's contribution to a hit: how it was found, and through what."""

    path: str = Field(description="The path: e.g. 'chunk' (vector), 'fulltext', 'atom', 'entity', 'title'.")
    score: float
    via: str | None = Field(None, description="The atom, fact, entity, topic or tag text that led to the chunk.")


class SearchHit(_Located):
    rank: int = Field(description="1-based rank over the whole result, across pages.")
    score: float
    text: str = Field(description="The chunk's whole text.")
    found_by: list[FoundBy]
    how_found: str = Field(description="The same paths as one line, e.g. \"fulltext 0.612; atom 0.840 via '...'\".")


class SearchResult(_Out):
    kb: str
    question: str
    method: str
    hits: list[SearchHit]
    offset: int
    next_offset: int | None = Field(description="Pass as offset for the next page; null when there is none.")


class CitationView(_Located):
    """A citation of the answer: the evidence ``[marker]`` refers to, down to the quoted characters."""

    marker: int
    quote: str = Field(description="The cited text: the part of the chunk's text the citation points at.")
    quote_start: int = Field(description="Where the quote starts in the chunk's text (see get_chunk).")
    quote_end: int
    claims: list[str] = Field(description="The sentences of the answer that cite this marker.")


class EvidenceView(_Out):
    """A chunk the answerer was given (cited or not)."""

    chunk_id: str
    title: str
    page: int | None
    char_start: int
    char_end: int
    score: float
    snippet: str = Field(description="The chunk's first 300 characters; get_chunk has all of it.")


class TraceSummary(_Out):
    index: int
    kind: str
    summary: str


class AskResult(_Out):
    kb: str
    question: str
    answer: str
    method: str = Field(description="The method that answered, e.g. 'auto:hybrid'.")
    question_class: str | None
    offline: bool = Field(description="True when no LLM is configured: the answer is extractive.")
    supporting_sentence: str | None = Field(
        None, description="Offline extractive answers: the evidence sentence the answer was taken from.")
    citations: list[CitationView]
    evidence: list[EvidenceView]
    trace: list[TraceSummary]
    stop_reason: str | None
    dropped_markers: list[int] = Field(description="Markers the answer used that pointed at no evidence (removed).")
    unsupported_citations: int = Field(
        0, description="Citations removed because the cited chunk does not support the sentence citing it.")
    abstained: bool = Field(
        False, description="True when no supported citation was left: the answer says the sources do not hold it.")
    llm_calls: int
    llm_tokens: int


class DocumentsResult(_Out):
    kb: str
    documents: list[DocumentInfo]
    total: int
    offset: int
    next_offset: int | None


class ChunkView(_Out):
    chunk_id: str
    order: int
    page: int | None
    char_start: int
    char_end: int
    text: str


class ChunkResult(_Located):
    kb: str
    order: int
    kind: str | None
    text: str
    section_path: list[str] = Field(description="The titles of the sections above the chunk, outermost first.")
    previous: list[ChunkView] = Field(description="The chunks just before it, in order.")
    next: list[ChunkView] = Field(description="The chunks just after it, in order.")


class EntityView(_Out):
    id: str
    name: str
    type: str | None
    aliases: list[str]
    facts: int
    mentions: int = Field(description="How many chunks mention it.")


class FactView(_Out):
    fact_id: str
    head: str
    relation: str
    tail: str
    text: str | None
    role: Literal["subject", "object"]
    method: str | None = Field(description="How the fact was extracted, e.g. 'llm' or 'offline'.")
    chunk_id: str


class EvidenceChunk(_Out):
    chunk_id: str
    document_id: str
    title: str
    source: str | None
    page: int | None
    char_start: int
    char_end: int
    text: str


class EntityResult(_Out):
    kb: str
    query: str
    entity: EntityView
    others: list[EntityView] = Field(description="Other entities the name matched, best first.")
    facts: list[FactView]
    chunks: list[EvidenceChunk] = Field(
        description="The chunks that state these facts; for an entity without facts, the chunks that mention it.")
    offset: int
    next_offset: int | None


class OutlineSection(_Out):
    id: str
    key: str
    title: str
    level: int
    page: int | None
    chunk_ids: list[str]


class Outline(_Out):
    """A document and its sections in reading order (the outline resource)."""

    kb: str
    document: DocumentInfo
    sections: list[OutlineSection]


class LoadedFile(_Out):
    path: str
    status: str = Field(description="'loaded', 'replaced', 'unchanged' or 'failed'.")
    error: str | None
    document_id: str | None
    documents: int
    chunks: int


class LoadResult(_Out):
    kb: str
    files: list[LoadedFile]
    loaded: int
    replaced: int
    unchanged: int
    failed: int
    distilled: list[str] = Field(description="The distilled layers built for the new or changed documents.")
    seconds: float


class DeleteResult(_Out):
    kb: str
    deleted: DocumentInfo
