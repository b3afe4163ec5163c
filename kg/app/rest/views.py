"""What the REST API returns: typed views over answers, hits, documents and stats.

A citation is shown inside its chunk with the cited span marked, so a reader sees the sentence that
supports the answer in its context; the Browser link opens the same evidence as a subgraph.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from kg.app.browser import browser_link, evidence_cypher
from kg.app.client import LAYERS, Stats
from kg.retrieval.base import Hit
from reasoning.types import Answer, Citation

__all__ = [
    "AskRequest", "AskResponse", "CitedSpan", "RetrieveRequest", "RetrieveResponse",
    "StatsView", "answer_view", "cited_span",
]


def _valid_text(value: str) -> str:
    """Refuse text that is not valid Unicode (a lone surrogate such as ``\\ud800``): 422, not a 500 later."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"the text is not valid Unicode at position {exc.start}") from None
    return value


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=4000, examples=["Which site had the most gearbox failures?"])
    method: str = Field("auto", max_length=64, description="Reasoning method; 'auto' routes by question class.")

    _text = field_validator("question", "method")(_valid_text)


class RetrieveRequest(BaseModel):
    question: str = Field(min_length=1, max_length=4000)
    k: int = Field(5, ge=1, le=100)

    _text = field_validator("question")(_valid_text)


class CitedSpan(BaseModel):
    """A citation placed inside its chunk: ``highlight`` is the cited span's [start, end) in ``chunk_text``."""

    marker: int
    chunk_id: str
    document_id: str
    title: str
    source: str | None
    page: int | None
    char_start: int
    char_end: int
    chunk_text: str
    highlight: tuple[int, int]


class AskResponse(BaseModel):
    kb: str
    answer: Answer
    citations: list[CitedSpan]
    evidence_cypher: str | None = Field(description="Cypher matching the cited chunks and their neighbourhood.")
    browser_link: str | None = Field(description="Opens the evidence Cypher in the Neo4j Browser's editor.")


class RetrieveResponse(BaseModel):
    kb: str
    hits: list[Hit]


class StatsView(BaseModel):
    kb: str
    layers: dict[str, int] = Field(description="Node counts per layer.")
    layer_labels: dict[str, list[str]]
    nodes: dict[str, int]
    relationships: dict[str, int]
    indexes: list[dict[str, Any]]
    schema_installed: bool
    embedder: str | None
    dimensions: int | None
    pending: dict[str, int] = Field(default_factory=dict,
                                    description="Per distilled layer, the chunks it has not distilled yet.")

    @classmethod
    def of(cls, kb: str, stats: Stats) -> StatsView:
        return cls(
            kb=kb, layers=stats.by_layer(), layer_labels={k: list(v) for k, v in LAYERS.items()},
            nodes=stats.nodes, relationships=stats.relationships,
            indexes=[{k: (v if isinstance(v, (int, float, str, list)) or v is None else str(v))
                      for k, v in row.items()} for row in stats.indexes],
            schema_installed=stats.schema.installed, embedder=stats.schema.embedder,
            dimensions=stats.schema.dimensions, pending=stats.pending,
        )


def cited_span(citation: Citation, evidence: list[Hit]) -> CitedSpan:
    """Place a citation in the text of its chunk.

    The chunk comes from the answer's evidence when it is there (else the citation's own text stands for
    it). The cited span is found by its text when that is a part of the chunk, else by its character
    offsets relative to the chunk's start; failing both, the whole chunk is marked.
    """
    hit = next((h for h in evidence if h.chunk_id == citation.chunk_id), None)
    chunk_text, chunk_start = (hit.text, hit.char_start) if hit else (citation.text, citation.char_start)
    start = chunk_text.find(citation.text) if citation.text and citation.text != chunk_text else -1
    if start >= 0:
        highlight = (start, start + len(citation.text))
    else:
        rel_start, rel_end = citation.char_start - chunk_start, citation.char_end - chunk_start
        highlight = (rel_start, rel_end) if 0 <= rel_start < rel_end <= len(chunk_text) else (0, len(chunk_text))
    return CitedSpan(
        marker=citation.marker, chunk_id=citation.chunk_id, document_id=citation.document_id,
        title=citation.title, source=citation.source, page=citation.page, char_start=citation.char_start,
        char_end=citation.char_end, chunk_text=chunk_text, highlight=highlight,
    )


def answer_view(kb: str, answer: Answer, browser_url: str | None) -> AskResponse:
    chunk_ids = [c.chunk_id for c in answer.citations] or [h.chunk_id for h in answer.evidence]
    cypher = evidence_cypher(chunk_ids) if chunk_ids else None
    return AskResponse(
        kb=kb, answer=answer, citations=[cited_span(c, answer.evidence) for c in answer.citations],
        evidence_cypher=cypher,
        browser_link=browser_link(browser_url, cypher) if cypher and browser_url else None,
    )
