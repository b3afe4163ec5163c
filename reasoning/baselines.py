"""The paper's other methods in the same framework (PIKE-RAG section 6.1), plus KG2RAG and PG-RAG.

* ``zero-shot-cot``: the LLM alone, reasoning step by step, no evidence (so no citation can stand).
* ``naive-r`` / ``naive-hr``: one retrieval with the question (flat R: up to 16 chunks at cosine >= 0.2;
  hierarchical H-R: up to 8 chunks at 0.5 plus 4 through the question's atoms), then answer.
* ``self-ask`` / ``self-ask-r`` / ``self-ask-hr``: follow-up questions answered one at a time, by the
  LLM's own knowledge or from evidence retrieved for each follow-up (R or H-R, with the budgets above).
* ``kg2rag`` / ``pgrag``: those methods' retrieval and organisation of the context, then the answer.
"""

from __future__ import annotations

from kg.llm import ANSWER, ZERO_SHOT_COT
from kg.retrieval.base import Hit, RetrievalFilter
from reasoning.core import Run
from reasoning.evidence import render_evidence
from reasoning.ports import ChunkRetriever
from reasoning.schemas import SELF_ASK
from reasoning.types import Answer, ChainOfThoughtStep, RetrieveStep, SelfAskFinalStep, SelfAskFollowUpStep

__all__ = ["naive", "self_ask", "zero_shot_cot"]


def zero_shot_cot(run: Run) -> Answer:
    """Zero-Shot CoT. Offline there is no model to reason with: hybrid retrieval and an extractive answer."""

    def reason() -> Answer:
        out = run.task(ZERO_SHOT_COT, question=run.question)
        run.note(ChainOfThoughtStep(detail={"reasoning": out.reasoning}))
        return run.checked("zero-shot-cot", out.answer, [], out.citations)

    return run.answerer.stepwise(run, "zero-shot-cot", reason,
                                 lambda: run.ports.hybrid.retrieve(run.question, k=run.settings.hybrid_k))


def naive(run: Run, method: str, retriever: ChunkRetriever, k: int) -> Answer:
    """Naive RAG: the question retrieves once, the answer cites what was retrieved."""
    evidence = retriever.retrieve(run.question, k=k)
    run.note(RetrieveStep(detail={"query": run.question,
                                  "hits": [(h.chunk_id, round(h.score, 6), h.explain()) for h in evidence]}))
    return run.cited(method, evidence)


def self_ask(run: Run, method: str, retriever: ChunkRetriever | None, k: int) -> Answer:
    """Self-Ask (Press et al.), bounded by ``max_steps`` follow-ups; with a retriever, each follow-up
    retrieves evidence (new chunks only) and is answered from it, else from the LLM's own knowledge.
    Offline: the question's own retrieval (by ``retriever``, else hybrid) and an extractive answer."""
    return run.answerer.stepwise(run, method, lambda: _self_ask(run, method, retriever, k),
                                 lambda: (retriever or run.ports.hybrid).retrieve(run.question, k=k),
                                 stop_reason="offline")


def _self_ask(run: Run, method: str, retriever: ChunkRetriever | None, k: int) -> Answer:
    evidence: list[Hit] = []
    transcript: list[str] = []
    for step in range(1, run.settings.max_steps + 1):
        out = run.task(SELF_ASK, question=run.question,
                       transcript="\n".join(transcript) or "(none)", context=render_evidence(evidence))
        if retriever is not None and not evidence and not transcript:
            # Nothing retrieved yet, whatever the model claims: with a retriever the question is the first
            # follow-up (as decompose's first atomic query), so a small model's closed-book "final answer"
            # cannot leave the answer without evidence.
            out = out.model_copy(update={"follow_up": out.follow_up.strip() or run.question, "final_answer": ""})
        if out.final_answer.strip() or not out.follow_up.strip():
            run.note(SelfAskFinalStep(detail={"step": step}))
            answer = run.checked(method, out.final_answer.strip() or "unknown", evidence, out.citations)
            answer.stop_reason = "final_answer"
            return answer
        follow = out.follow_up.strip()
        if retriever is None:
            inner = run.task(ZERO_SHOT_COT, question=follow)
            transcript.append(f"Follow up: {follow}\nIntermediate answer: {inner.answer}")
            run.note(SelfAskFollowUpStep(detail={"follow_up": follow, "intermediate": inner.answer}))
            continue
        where = RetrievalFilter(exclude_chunk_ids=[h.chunk_id for h in evidence])
        new = [h for h in retriever.retrieve(follow, k=k, where=where) if h.chunk_id not in where.exclude_chunk_ids]
        first = len(evidence) + 1
        evidence.extend(new)
        inner_answer = run.task(ANSWER, question=follow,
                                context=render_evidence(new, start=first)).answer if new else "no evidence found"
        transcript.append(f"Follow up: {follow}\nIntermediate answer: {inner_answer}")
        run.note(SelfAskFollowUpStep(detail={"follow_up": follow, "intermediate": inner_answer,
                                             "retrieved": [h.chunk_id for h in new]}))
    answer = run.cited(method, evidence)
    answer.stop_reason = "max_steps"
    return answer
