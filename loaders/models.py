"""Typed data that loaders produce and the graph writer consumes.

Offsets (``char_start``/``char_end``) index into :attr:`SourceDocument.text`, the document's extracted
plain text: a block's text is ``doc.text[b.char_start:b.char_end]`` (:meth:`SourceDocument.block_text`), and
``doc.text[c.char_start:c.char_end] == c.text`` holds for every text chunk. Pages are 1-based; ``None`` where the
format has no pages.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Chunk",
    "ChunkKind",
    "Figure",
    "Link",
    "Section",
    "Sentence",
    "SourceDocument",
    "Table",
    "TextBlock",
]

ChunkKind = Literal["text", "table", "figure"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Section(_Model):
    """A heading and what is under it. ``key`` is the section's path, e.g. ``"1"``, ``"1.2"``; the
    document root is ``"0"`` (level 0, titled with the document's title) and always present."""

    key: str
    title: str
    level: int
    order: int
    parent_key: str | None
    page: int | None = None


class TextBlock(_Model):
    """A paragraph, list item or similar run of text, in reading order: a span of the document's text, which
    it does not copy (a 100 MB text file is 170,000 blocks)."""

    section_key: str
    page: int | None
    char_start: int
    char_end: int


class Sentence(_Model):
    """A sentence of a QA-corpus passage, kept so supporting-sentence retrieval can be scored."""

    index: int
    char_start: int
    char_end: int


class Table(_Model):
    key: str
    section_key: str
    page: int | None
    caption: str
    header: list[str]
    rows: list[list[str]]
    markdown: str
    csv: str
    char_start: int
    char_end: int


class Figure(_Model):
    key: str
    section_key: str
    page: int | None
    caption: str
    char_start: int
    char_end: int


class Link(_Model):
    """A hyperlink, PDF link annotation or cross-reference; ``target`` is a URL or a (relative) path."""

    target: str
    text: str = ""
    page: int | None = None


class SourceDocument(_Model):
    """One parsed input document, before chunking.

    ``sha256`` hashes the document's content: the file's bytes when the document is the whole file, the
    passage when a file holds many documents (a QA corpus). ``file`` names such a many-document file, so an
    edited corpus can drop the passages it no longer holds; it is ``None`` when ``source`` is the file.
    """

    source: str
    file: str | None = None
    title: str
    format: str
    sha256: str
    text: str
    pages: int | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    sections: list[Section]
    blocks: list[TextBlock]
    tables: list[Table] = Field(default_factory=list)
    figures: list[Figure] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)
    sentences: list[Sentence] = Field(default_factory=list)
    language: str = "en"

    def block_text(self, block: TextBlock) -> str:
        return self.text[block.char_start:block.char_end]


class Chunk(_Model):
    """A retrieval unit. Text chunks never cross sections; tables and figures get one chunk each."""

    id: str
    document_id: str
    section_key: str
    order: int
    kind: ChunkKind = "text"
    text: str
    page: int | None
    char_start: int
    char_end: int
    tokens: int
    summary: str | None = None
    ref_key: str | None = None
