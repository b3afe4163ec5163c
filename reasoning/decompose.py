"""PIKE-RAG Algorithm 1: task solving with knowledge-aware decomposition, sized for small models.

Context C0 is the question's own top ``seed_k`` hybrid chunks (the paper starts from an empty C0; a small
model then spends its few calls re-finding what one-shot retrieval finds, so here it starts from there and
the loop looks for what one-shot retrieval missed; ``seed_k`` = 0 is the paper's empty C0). For t = 1..N
the LLM proposes atomic questions from the question and C(t-1), or says the context suffices
(task ``question_proposals``: line 3 and the paper's "sufficient" early stop in one
call); each new proposal retrieves its top-K atoms with cosine >= delta, hopping to their chunks and
skipping chunks already in the context (line 4; the first step queries the question itself too); the LLM
selects the most useful candidate (task ``atom_selection``, line 5) and its chunk joins the context. The
answer is then generated from C(t) (task ``answer``, line 14). Every step is recorded in a :class:`DecompositionTrace`.

What a small model needs, and what keeps the calls bounded:

* candidates are shown one per chunk (the best-scored atom of each; choosing between atoms of one chunk
  adds the same chunk), at most ``max_candidates``, numbered from 1;
* a selection that is not a candidate's number (unparseable, out of range) takes the best-scored candidate
  instead of ending the run, and the step's ``reason`` says so (``fallback: ...``); only an explicit null
  ("none helps") stops, as in the paper;
* no selection call when only one chunk is a candidate: there is nothing to choose;
* the loop stops when the proposals only repeat earlier ones (they would find nothing the context lacks),
  when no candidate is found (no new chunk), and before a step the call budget ``max_calls`` (which keeps
  one call for the answer) could not pay for.
"""

from __future__ import annotations

from dataclasses import dataclass

from kg.errors import LLMOutputError
from kg.llm import ATOM_SELECTION, QUESTION_PROPOSALS
from kg.retrieval.base import AtomCandidate, Hit
from kg.shared.text import text_key
from reasoning.core import Run
from reasoning.evidence import render_evidence
from reasoning.types import Answer, CandidateRecord, DecomposeStep, DecompositionStep, DecompositionTrace

__all__ = ["STOP_REASONS", "Choice", "choose_candidate", "collect_candidates", "decompose", "render_candidates"]

STOP_REASONS = ("no_proposals", "repeated_proposals", "sufficient", "no_candidates", "none_selected",
                "call_budget", "max_steps")

_ANSWER_CALLS = 1
"""Calls the budget keeps for the answer (line 14)."""


def collect_candidates(run: Run, proposals: list[str], *, k: int, threshold: float, exclude: list[str],
                       limit: int | None = None) -> list[tuple[str, AtomCandidate]]:
    """Line 4: ``(proposal, candidate)`` pairs over all proposals, best score first, one per chunk (its
    best-scored atom: selecting another atom of the same chunk would add the same chunk), at most
    ``limit``."""
    best: dict[str, tuple[str, AtomCandidate]] = {}
    for proposal in proposals:
        for cand in run.ports.atoms.candidates(proposal, k=k, threshold=threshold, exclude_chunk_ids=exclude):
            chunk = cand.hit.chunk_id
            if chunk in exclude:
                continue  # the port must exclude them; this is checked, not trusted
            if chunk not in best or cand.score > best[chunk][1].score:
                best[chunk] = (proposal, cand)
    ranked = sorted(best.values(), key=lambda pc: -pc[1].score)
    return ranked[:limit] if limit is not None else ranked


def render_candidates(candidates: list[tuple[str, AtomCandidate]]) -> str:
    """The candidates as the selection prompt lists them, numbered from 1 (small models count from 1)."""
    return "\n".join(f"{i}. {cand.atom_text} (from: {cand.hit.title})"
                     for i, (_, cand) in enumerate(candidates, start=1))


@dataclass(frozen=True)
class Choice:
    """Line 5's outcome: ``index`` into the candidates (0-based), None when the model said none helps;
    ``fallback`` when the model's reply named no candidate and the best-scored one was taken."""

    index: int | None
    reason: str
    fallback: bool = False


def choose_candidate(run: Run, context: list[Hit], candidates: list[tuple[str, AtomCandidate]]) -> Choice:
    """Line 5: the LLM picks the most useful candidate by its number (1-based), or null for none.

    A reply that names no candidate (out of range, or output that stays invalid) falls back to the
    best-scored candidate, and the reason says so: a small model's slip must not end the search.
    """
    try:
        selection = run.task(ATOM_SELECTION, question=run.question,
                             context=render_evidence(context), candidates=render_candidates(candidates),
                             count=len(candidates))
    except LLMOutputError as exc:
        return Choice(0, f"fallback: unusable selection ({str(exc).splitlines()[0][:120]}); "
                         "took the best-scored candidate", fallback=True)
    if selection.index is None:
        return Choice(None, selection.reason)
    if 1 <= selection.index <= len(candidates):
        return Choice(selection.index - 1, selection.reason)
    return Choice(0, f"fallback: {selection.index} is not a candidate number (1-{len(candidates)}); "
                     f"took the best-scored candidate. {selection.reason}".strip(), fallback=True)


def decompose(run: Run) -> Answer:
    """Answer ``run.question`` with Algorithm 1 (offline: H-R retrieval and an extractive answer)."""
    s = run.settings
    trace = DecompositionTrace(question=run.question, max_steps=s.max_steps, top_k=s.atom_k,
                               threshold=s.atom_threshold)
    return run.answerer.stepwise(run, "decompose", lambda: _decompose(run, trace),
                                 lambda: run.ports.hierarchical.retrieve(run.question, k=s.hr_k),
                                 decomposition=trace.model_copy(update={"stop_reason": "offline"}),
                                 stop_reason="offline")


def _decompose(run: Run, trace: DecompositionTrace) -> Answer:
    s = run.settings
    context: list[Hit] = run.ports.hybrid.retrieve(run.question, k=s.seed_k) if s.seed_k else []
    trace.seed_chunk_ids = [h.chunk_id for h in context]
    asked: set[str] = set()  # every proposal so far, normalised
    calls = 0  # tasks this loop issued (cache hits included, so a re-run follows the same path)
    trace.stop_reason = "max_steps"
    for t in range(1, s.max_steps + 1):
        if calls + 1 + _ANSWER_CALLS > s.max_calls:
            trace.stop_reason = "call_budget"
            break
        step = DecompositionStep(index=t)
        trace.steps.append(step)
        proposed = run.task(QUESTION_PROPOSALS, question=run.question,
                            context=render_evidence(context), max_proposals=s.max_proposals)
        calls += 1
        step.proposals = list(dict.fromkeys(p.strip() for p in proposed.proposals if p.strip()))[: s.max_proposals]
        step.sufficient = proposed.sufficient
        if proposed.sufficient and context:
            trace.stop_reason = "sufficient"
            break
        if not context and not step.proposals:
            # Nothing is known yet, whatever the model claims: the question is the first atomic query
            # (Figure 11, path b), so a small model's premature "sufficient" cannot leave the answer bare.
            step.proposals = [run.question]
        if not step.proposals:
            trace.stop_reason = "no_proposals"
            break
        fresh = [p for p in step.proposals if text_key(p) not in asked]
        if not fresh:
            trace.stop_reason = "repeated_proposals"
            break
        asked.update(text_key(p) for p in fresh)
        queries = fresh
        if text_key(run.question) not in asked:
            # The question itself is a standing query of the first step: a small model's proposals may only
            # ask about what C0 already holds, and the chunks ranked just below C0 are then still candidates.
            asked.add(text_key(run.question))
            queries = [*fresh, run.question]
        exclude = [h.chunk_id for h in context]
        candidates = collect_candidates(run, queries, k=s.atom_k, threshold=s.atom_threshold, exclude=exclude,
                                        limit=s.max_candidates)
        step.candidates = [
            CandidateRecord(proposal=p, atom_id=c.atom_id, atom_text=c.atom_text, chunk_id=c.hit.chunk_id,
                            title=c.hit.title, score=round(c.score, 6))
            for p, c in candidates
        ]
        if not candidates:
            trace.stop_reason = "no_candidates"
            break
        if len(candidates) == 1:
            choice = Choice(0, "the only new chunk: no selection needed")
        elif calls + 1 + _ANSWER_CALLS > s.max_calls:
            choice = Choice(0, "fallback: the call budget leaves no selection; took the best-scored candidate",
                            fallback=True)
        else:
            choice = choose_candidate(run, context, candidates)
            calls += 1
        step.reason = choice.reason
        if choice.index is None:
            trace.stop_reason = "none_selected"
            break
        _, chosen = candidates[choice.index]
        step.selected, step.selected_atom = choice.index, chosen.atom_text
        step.added_chunk_id, step.added_title = chosen.hit.chunk_id, chosen.hit.title
        context.append(chosen.hit)
    if not context:
        # No atom led anywhere: answer from the question's own retrieval rather than from nothing.
        context = run.ports.hybrid.retrieve(run.question, k=s.hybrid_k)
        trace.stop_reason = f"{trace.stop_reason}; answered from the question's retrieval"
    trace.context_chunk_ids = [h.chunk_id for h in context]
    answer = run.cited("decompose", context, stop_reason=trace.stop_reason)
    trace.usage = run.usage()
    answer.decomposition = trace
    answer.trace = [DecomposeStep.model_validate({"index": st.index, "detail": st.model_dump()}) for st in trace.steps]
    return answer
