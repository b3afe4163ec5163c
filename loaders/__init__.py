"""Strata's document loaders: files in, typed :class:`SourceDocument` out, then structure-aware chunks.

``load_path`` picks a loader by extension (else by content) and yields documents; ``discover`` finds the
files under folders; ``chunk_document`` turns a document into retrieval chunks; ``load_questions`` reads
QA benchmark questions with their gold evidence.
"""

from loaders.base import Loader
from loaders.chunking import chunk_document, count_tokens, split_sentences
from loaders.models import Chunk, ChunkKind, Figure, Link, Section, Sentence, SourceDocument, Table, TextBlock
from loaders.qa import QAQuestion, load_questions
from loaders.registry import discover, load_path, loader_for

__all__ = [
    "Chunk",
    "ChunkKind",
    "Figure",
    "Link",
    "Loader",
    "QAQuestion",
    "Section",
    "Sentence",
    "SourceDocument",
    "Table",
    "TextBlock",
    "chunk_document",
    "count_tokens",
    "discover",
    "load_path",
    "load_questions",
    "loader_for",
    "split_sentences",
]
