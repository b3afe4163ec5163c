"""Knobs of the reasoning methods, with the PIKE-RAG paper's values as defaults (section 6.1)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ReasoningSettings"]


class ReasoningSettings(BaseModel):
    """Every setting a reasoning method reads; pass one to :func:`reasoning.answer`.

    Algorithm 1: ``max_steps`` (N = 5), ``atom_k`` (K, 4 per atomic query) and ``atom_threshold``
    (delta = 0.5, cosine). Flat retrieval (R): ``flat_k`` = 16 at ``flat_threshold`` = 0.2. Hierarchical
    retrieval (H-R): ``hier_k`` = 8 chunks at ``hier_threshold`` = 0.5, plus ``atom_k`` via atoms.
    Algorithm 2: ``explore_k`` (K' > K), ``explore_threshold`` (delta' < delta), ``ucb_alpha``,
    ``rollouts`` per question.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steps: int = Field(default=5, ge=1)
    max_proposals: int = Field(default=5, ge=1)
    atom_k: int = Field(default=4, ge=1)
    atom_threshold: float = 0.5
    flat_k: int = Field(default=16, ge=1)
    flat_threshold: float = 0.2
    hier_k: int = Field(default=8, ge=1)
    hier_threshold: float = 0.5
    hybrid_k: int = Field(default=8, ge=1)
    answer_k: int = Field(default=8, ge=1)
    explore_k: int = Field(default=8, ge=1)
    explore_threshold: float = 0.3
    ucb_alpha: float = 1.0
    rollouts: int = Field(default=3, ge=1)
    perspectives: tuple[str, ...] = ("a domain expert", "a sceptical reviewer", "a practitioner")
