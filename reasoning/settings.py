"""Knobs of the reasoning methods, with the PIKE-RAG paper's values as defaults (section 6.1)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ReasoningSettings"]


class ReasoningSettings(BaseModel):
    """Every setting a reasoning method reads; pass one to :func:`reasoning.answer`.

    Algorithm 1: ``max_steps`` (N = 5), ``atom_k`` (K, 4 per atomic query) and ``atom_threshold``
    (delta = 0.5, cosine); ``max_candidates`` chunks shown to the selection at most (one candidate atom per
    chunk), and ``max_calls``, the LLM calls one question may spend, the answer's included (the loop stops
    before a step it could not pay for; the paper's N = 5 steps of two calls each would spend 11).
    ``seed_k``: the question's own top hybrid chunks that make up C0 (the paper starts from an empty
    context; 0 restores that), so a small model's calls go to the hops one-shot retrieval missed.
    Flat retrieval (R): ``flat_k`` = 16 at ``flat_threshold`` = 0.2. Hierarchical
    retrieval (H-R): ``hier_k`` = 8 chunks at ``hier_threshold`` = 0.5, plus ``atom_k`` = 4 more through
    atoms per atomic query (:attr:`hr_k`).
    Algorithm 2: ``explore_k`` (K' > K), ``explore_threshold`` (delta' < delta), ``ucb_alpha``,
    ``rollouts`` per question, and ``proposal_temperature`` for sampling diverse proposals (the paper's
    0.7 for diverse generation; its answering steps use 0).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steps: int = Field(default=5, ge=1)
    max_proposals: int = Field(default=5, ge=1)
    max_candidates: int = Field(default=6, ge=1)
    max_calls: int = Field(default=8, ge=2)
    seed_k: int = Field(default=4, ge=0)
    atom_k: int = Field(default=4, ge=1)
    atom_threshold: float = 0.5
    flat_k: int = Field(default=16, ge=1)
    flat_threshold: float = 0.2
    hier_k: int = Field(default=8, ge=1)
    hier_threshold: float = 0.5
    hybrid_k: int = Field(default=8, ge=1)
    explore_k: int = Field(default=8, ge=1)
    explore_threshold: float = 0.3
    ucb_alpha: float = 1.0
    proposal_temperature: float = Field(default=0.7, gt=0.0)
    rollouts: int = Field(default=3, ge=1)
    perspectives: tuple[str, ...] = ("a domain expert", "a sceptical reviewer", "a practitioner")
    llm_citation_check: bool = False
    """With an LLM: settle the close calls of the citation check by asking the model (check 2,
    :mod:`reasoning.citations.entailment`); off, key tokens alone decide."""

    @property
    def hr_k(self) -> int:
        """H-R's chunk budget for one query: ``hier_k`` directly plus ``atom_k`` through the atoms of the query
        itself (path b of Figure 11 uses the question, or a follow-up, as its atomic query)."""
        return self.hier_k + self.atom_k
