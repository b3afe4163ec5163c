"""Output schemas of the reasoning-only LLM tasks (the shared ones live in :mod:`kg.llm.schemas`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kg.llm import Task

__all__ = ["SELF_ASK", "SelfAskStep"]


class SelfAskStep(BaseModel):
    """Self-Ask: the next follow-up question, or the final answer (with the sources it cites)."""

    model_config = ConfigDict(extra="ignore")

    follow_up: str = ""
    final_answer: str = ""
    citations: list[int] = Field(default_factory=list)


SELF_ASK = Task("self_ask", SelfAskStep)
"""Self-Ask's next step (fields ``question``, ``transcript``, ``context``), with the default budget."""
