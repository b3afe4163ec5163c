"""The citation check's seam: a :class:`CitationVerifier` judges whether a cited chunk supports one sentence
of an answer (:mod:`reasoning.citations.tokens`, always; :mod:`reasoning.citations.entailment`, with an LLM)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["CitationVerifier", "Claim", "Support"]


@dataclass(frozen=True)
class Claim:
    """One sentence of an answer (markers stripped), the question it answers, the text of the chunk it cites
    and its document's ``title``; ``whole_answer`` when the sentence is all the answer says (so it answers the
    question itself); ``common``, the key tokens most of the evidence shares."""

    sentence: str
    question: str
    source: str
    whole_answer: bool = False
    title: str = ""
    common: frozenset[str] = frozenset()
    """Key tokens most of the evidence given shares (:func:`reasoning.citations.tokens.common_tokens`): the
    corpus's topic ("Borealis Wind"), no sign of what was asked."""


@dataclass(frozen=True)
class Support:
    """A verdict on a :class:`Claim`: whether the source supports it, the key-token ``score`` it rests on (the
    share of the claim's key tokens found in the source's best passage), and which check decided (``by``)."""

    supported: bool
    score: float
    by: Literal["tokens", "llm"]


class CitationVerifier(Protocol):
    """Decides whether a cited chunk supports the sentence that cites it."""

    def support(self, claim: Claim) -> Support: ...
