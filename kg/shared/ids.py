"""The id scheme of the information-resource and corpus layers, in one place.

A document's id derives from where it comes from (stable across versions of a file); a section's from its
document and key; a chunk's from its document, position and text, so an edited chunk gets a new id.
"""

from __future__ import annotations

import hashlib

__all__ = ["chunk_id", "document_id", "section_id"]


def document_id(source: str) -> str:
    """Stable across versions of a file: derived from where it comes from, not from its content."""
    return "doc_" + hashlib.sha1(source.encode("utf-8")).hexdigest()[:16]


def section_id(doc_id: str, key: str) -> str:
    return f"{doc_id}:s{key}"


def chunk_id(doc_id: str, order: int, text: str) -> str:
    return f"{doc_id}:c{order}:{hashlib.sha1(text.encode('utf-8')).hexdigest()[:10]}"
