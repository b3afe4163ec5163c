"""The retrieval seam: every method returns typed hits that explain themselves.

A :class:`Hit` carries the chunk, where it is (document title, page, character span), its final score and
the score's components: which path found it, and through which atom, fact or entity. Methods implement
:class:`Retriever`; :mod:`kg.retrieval` picks one by name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AtomCandidate", "ChunkLocation", "Hit", "HitSource", "RetrievalFilter", "Retriever"]


class HitSource(BaseModel):
    """One path's contribution to a hit: e.g. ``path="atom"`` via atom text, with its raw score."""

    model_config = ConfigDict(frozen=True)

    path: str
    score: float
    via: str | None = None  # the atom, fact, entity, topic or tag text that led here
    via_id: str | None = None


class ChunkLocation(BaseModel):
    """Where a piece of evidence is: its chunk, document, page and character span in the document's text.
    Hits and citations both carry it, so a citation points exactly where its hit did."""

    chunk_id: str
    document_id: str
    title: str
    source: str | None = None
    page: int | None = None
    char_start: int
    char_end: int

    def location(self) -> dict[str, Any]:
        """The location fields alone, to build another located model from this one."""
        return self.model_dump(include=set(ChunkLocation.model_fields))


class Hit(ChunkLocation):
    text: str
    score: float
    sources: list[HitSource] = Field(default_factory=list)
    sentences: list[int] = Field(default_factory=list)

    def explain(self) -> str:
        return "; ".join(f"{s.path} {s.score:.3f}" + (f" via {s.via!r}" if s.via else "") for s in self.sources)


class AtomCandidate(BaseModel):
    """An atom found for a (sub-)question, with the chunk it points to (PIKE-RAG's atom-to-chunk hop)."""

    atom_id: str
    atom_text: str
    score: float
    hit: Hit


class RetrievalFilter(BaseModel):
    """Restrict retrieval to some documents, formats or metadata (``key=value`` strings)."""

    document_ids: list[str] | None = None
    formats: list[str] | None = None
    metadata: list[str] | None = None
    exclude_chunk_ids: list[str] = Field(default_factory=list)


class Retriever(ABC):
    """A retrieval method. ``name`` is what ``--method`` selects."""

    name: str

    @abstractmethod
    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        """The top ``k`` chunks for ``question``, best first."""

    def retrieve_many(self, questions: Sequence[str], *, k: int = 5) -> list[list[Hit]]:
        return [self.retrieve(q, k=k) for q in questions]
