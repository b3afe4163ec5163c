"""Check 2 of a citation, optional: when an LLM is configured and ``ReasoningSettings.llm_citation_check`` is
on, the model settles the close calls of check 1 (:data:`reasoning.citations.tokens.UNDECIDED`) with one short
yes/no prompt per citation (task ``citation_support``, ``kg/prompts/citation_support.<lang>.txt``, at most 24
completion tokens). Everything check 1 decides stays decided by it, so the calls are spent only where token
overlap cannot tell, and a reply that cannot be read falls back to check 1's verdict."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kg.errors import LLMOutputError
from kg.llm import LLM, Task, detect_language
from reasoning.citations.base import Claim, Support
from reasoning.citations.tokens import score

__all__ = ["CITATION_SUPPORT", "CitationSupport", "EntailmentVerifier"]


class CitationSupport(BaseModel):
    """Whether a cited source states what the answer's sentence says."""

    model_config = ConfigDict(extra="ignore")

    supported: bool


CITATION_SUPPORT = Task("citation_support", CitationSupport, 24)
"""The entailment check of one citation (fields ``question``, ``sentence``, ``source``)."""


class EntailmentVerifier:
    """:class:`reasoning.citations.base.CitationVerifier`: key tokens first, the LLM for their close calls."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def support(self, claim: Claim) -> Support:
        found = score(claim)
        if not found.undecided:
            return Support(supported=found.supported, score=found.score, by="tokens")
        try:
            out = self.llm.run(CITATION_SUPPORT, lang=detect_language(claim.question), question=claim.question,
                               sentence=claim.sentence,
                               source=f"{claim.title}: {claim.source}" if claim.title else claim.source)
        except LLMOutputError:
            return Support(supported=found.supported, score=found.score, by="tokens")
        return Support(supported=out.supported, score=found.score, by="llm")
