"""Typed results of the reasoning layer, shared by the CLI, the client, the REST API and the web page."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from kg.retrieval.base import Hit

__all__ = ["Answer", "Citation", "TraceStep"]


class Citation(BaseModel):
    """Evidence ``[marker]`` as given to the answerer: where it is, down to the character span."""

    marker: int
    chunk_id: str
    document_id: str
    title: str
    source: str | None = None
    page: int | None = None
    char_start: int
    char_end: int
    text: str


class TraceStep(BaseModel):
    """One step of a reasoning loop (e.g. one iteration of Algorithm 1), for display and JSON."""

    index: int
    kind: str
    detail: dict[str, Any] = Field(default_factory=dict)


class Answer(BaseModel):
    question: str
    answer: str
    method: str
    question_class: str | None = None
    offline: bool
    citations: list[Citation] = Field(default_factory=list)
    evidence: list[Hit] = Field(default_factory=list)
    trace: list[TraceStep] = Field(default_factory=list)
    stop_reason: str | None = None
    llm: dict[str, Any] | None = None
