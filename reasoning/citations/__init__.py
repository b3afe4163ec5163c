"""Citations a user can trust: each citation is checked against the sentence that carries it, unsupported ones
are dropped and counted, and an answer with no supported citation left abstains.

* :mod:`reasoning.citations.base`: the seam, :class:`CitationVerifier` (one :class:`Claim` in, a
  :class:`Support` out);
* :mod:`reasoning.citations.tokens`: check 1, always: the cited chunk's best passage holds the sentence's key
  tokens (share >= 0.5, every number the sentence states);
* :mod:`reasoning.citations.entailment`: check 2, optional: the LLM settles check 1's close calls;
* :mod:`reasoning.citations.hold`: applying a verifier to an answer (drops, counts, abstention).

Every answer goes through it: :meth:`reasoning.core.Run.checked` (every LLM answer),
:func:`reasoning.extractive_answerer.extractive` (every offline answer) and the LLM-written explanation of an L3
forecast; answers computed in Cypher from a table's rows cite the table they were computed from.
"""

from __future__ import annotations

from kg.llm import LLM, OfflineLLM
from reasoning.citations.base import CitationVerifier, Claim, Support
from reasoning.citations.entailment import EntailmentVerifier
from reasoning.citations.hold import (
    ABSTENTIONS,
    CLOSED_BOOK_METHODS,
    IDEA_METHODS,
    abstention,
    hold_markers,
    hold_to_sources,
)
from reasoning.citations.tokens import SUPPORT_THRESHOLD, UNDECIDED, TokenVerifier, key_tokens
from reasoning.settings import ReasoningSettings

__all__ = [
    "ABSTENTIONS",
    "CLOSED_BOOK_METHODS",
    "IDEA_METHODS",
    "SUPPORT_THRESHOLD",
    "UNDECIDED",
    "CitationVerifier",
    "Claim",
    "EntailmentVerifier",
    "Support",
    "TokenVerifier",
    "abstention",
    "hold_markers",
    "hold_to_sources",
    "key_tokens",
    "verifier_for",
]


def verifier_for(llm: LLM, settings: ReasoningSettings) -> CitationVerifier:
    """Check 1 alone, or with check 2 when an LLM is configured and ``settings.llm_citation_check`` is on."""
    if settings.llm_citation_check and not isinstance(llm, OfflineLLM):
        return EntailmentVerifier(llm)
    return TokenVerifier()
