"""Pydantic output schemas of the LLM tasks; :mod:`kg.llm.tasks` binds each to its task's name and prompt.

>>> AtomicQuestions.model_validate({"questions": ["What is Neo4j?"]}).questions
['What is Neo4j?']
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "AtomSelection",
    "AtomicQuestions",
    "AtomsTriples",
    "ChunkKnowledge",
    "ChunkTags",
    "CitedAnswer",
    "EnhancedChunk",
    "FactItem",
    "FactItems",
    "ForecastExplanation",
    "JudgeVerdict",
    "KeyPoints",
    "MindMap",
    "MindMapNode",
    "Perspective",
    "QuestionClass",
    "QuestionProposals",
    "Synthesis",
    "TagAliases",
    "TagClass",
    "TagClasses",
    "Triple",
    "Triples",
]


class _Schema(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AtomicQuestions(_Schema):
    """PIKE-RAG knowledge atomizing: the questions a chunk answers."""

    questions: list[str] = Field(description="Self-contained questions answered by the chunk")


class Triple(_Schema):
    head: str
    head_type: str = "Entity"
    relation: str
    tail: str
    tail_type: str = "Entity"


class Triples(_Schema):
    """KG2RAG: (head, relation, tail) triples with entity types."""

    triples: list[Triple]


class QuestionProposals(_Schema):
    """PIKE-RAG: follow-up atomic questions to retrieve next, or ``sufficient`` when done."""

    proposals: list[str] = Field(default_factory=list)
    sufficient: bool = False


class AtomSelection(_Schema):
    """PIKE-RAG Algorithm 1: which candidate atom helps most, by its number as listed (from 1), or None."""

    index: int | None = None
    reason: str = ""


_MARKERS = re.compile(r"[\[\u3010\uff3b][\d\s,;\-\u2013\u3001\uff0c]*[\]\u3011\uff3d]")


class CitedAnswer(_Schema):
    """An answer with ``[n]`` markers; ``citations`` lists the n used (1-based)."""

    answer: str = Field(min_length=1)
    citations: list[int] = Field(default_factory=list)
    reasoning: str = ""
    short: str = ""
    """The answer alone in a few words (a name, a number, yes or no), as QA benchmarks score it; empty when
    the sources do not hold it."""

    @field_validator("answer")
    @classmethod
    def _in_words(cls, value: str) -> str:
        # Small models copy the reply's example shape and answer "[1]": that cites, but says nothing.
        if not re.search(r"\w", _MARKERS.sub("", value)):
            raise ValueError("the answer must state the answer in words, not only citation markers")
        return value


class QuestionClass(_Schema):
    """The question's class (factual, linkable, predictive, creative) and an optional subtype."""

    label: Literal["factual", "linkable", "predictive", "creative"]
    subtype: str = ""


class TagClass(_Schema):
    name: str
    description: str = ""


class TagClasses(_Schema):
    """Tag classes (dimensions) useful to describe the corpus for a domain."""

    classes: list[TagClass]


class ChunkTags(_Schema):
    """Tags of one chunk, grouped by tag class."""

    tags: dict[str, list[str]] = Field(default_factory=dict)


class TagAliases(_Schema):
    """PIKE-RAG tag-mapping table: colloquial terms users say for each tag, keyed by the tag's name."""

    aliases: dict[str, list[str]] = Field(default_factory=dict)


class KeyPoints(_Schema):
    """PG-RAG: the key points an answer to the question must cover."""

    points: list[str]


class FactItem(_Schema):
    topic: str = ""
    fact: str


class FactItems(_Schema):
    """PG-RAG fact-check items: standalone, verifiable facts extracted from a text."""

    items: list[FactItem]


class MindMapNode(_Schema):
    label: str
    children: list[MindMapNode] = Field(default_factory=list)


class MindMap(_Schema):
    """PG-RAG mind map: a topic tree over a document's facts."""

    topic: str
    branches: list[MindMapNode] = Field(default_factory=list)


class ForecastExplanation(_Schema):
    """A predictive answer: the forecast, its drivers, and a confidence in [0, 1]."""

    forecast: str
    drivers: list[str] = Field(default_factory=list)
    confidence: float = 0.5


class Perspective(_Schema):
    """One perspective on a creative question."""

    viewpoint: str
    argument: str
    citations: list[int] = Field(default_factory=list)


class Synthesis(_Schema):
    """A synthesis of several perspectives."""

    answer: str
    citations: list[int] = Field(default_factory=list)


class JudgeVerdict(_Schema):
    """An LLM judge's verdict on an answer against a reference."""

    score: float = Field(ge=0.0, le=1.0)
    correct: bool
    rationale: str = ""


class EnhancedChunk(_Schema):
    """PIKE-RAG recurrent split: how many of the window's numbered sentences form the next chunk, and
    the forward summary of the document up to and including it. The chunk's text stays verbatim (its
    page and character span must remain exact); the summary carries the context."""

    sentences: int = Field(ge=1)
    summary: str


MindMapNode.model_rebuild()


class AtomsTriples(_Schema):
    """One call for two layers: the questions a chunk answers (PIKE-RAG atoms) and its typed triples (KG2RAG)."""

    # Required, as in AtomicQuestions and Triples: a reply missing either key is malformed, not "nothing found".
    questions: list[str] = Field(description="Self-contained questions answered by the chunk")
    triples: list[Triple]


class ChunkKnowledge(AtomsTriples):
    """One call for the three LLM default layers: atoms, triples and the chunk's tags by tag class."""

    # Required too: a reply without tags is malformed (ChunkTags' default is for its own task's "nothing").
    tags: dict[str, list[str]]
