"""The id scheme of the information-resource and corpus layers, in one place.

A document's id derives from where it comes from (stable across versions of a file); a section's from its
document and key; a chunk's from its document and text (and, for a text repeated in the document, which
repeat it is), not its position: an edited chunk gets a new id, and an unchanged one keeps its id when text is
inserted or removed before it, so a replaced document keeps what was distilled from its unchanged chunks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

__all__ = ["chunk_ids", "document_id", "section_id"]


def document_id(source: str) -> str:
    """Stable across versions of a file: derived from where it comes from, not from its content."""
    return "doc_" + hashlib.sha1(source.encode("utf-8")).hexdigest()[:16]


def section_id(doc_id: str, key: str) -> str:
    return f"{doc_id}:s{key}"


def chunk_ids(doc_id: str, texts: Iterable[str]) -> list[str]:
    """The ids of a document's chunks, in order: ``<document id>:c<sha1(text)[:12]>``, and ``-<n>`` after it for
    the n-th repeat of a text already seen in the document."""
    seen: dict[str, int] = {}
    out = []
    for text in texts:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]
        repeat = seen.get(digest, 0)
        seen[digest] = repeat + 1
        out.append(f"{doc_id}:c{digest}" + (f"-{repeat}" if repeat else ""))
    return out
