"""PIKE-RAG Algorithm 1: task solving with knowledge-aware decomposition.

Context C0 is empty. For t = 1..N the LLM proposes atomic questions from the question and C(t-1)
(task ``question_proposals``); each proposal retrieves its top-K atoms with cosine >= delta, hopping to their
chunks and skipping chunks already in the context; the LLM selects the most useful atom or none (task
``atom_selection``); the selected atom's chunk joins the context. The loop stops on no proposals, on the
LLM judging the context sufficient, on no candidates, on none selected, or after N steps; the answer is
then generated from C(t) (task ``answer``). Every step is recorded in a :class:`DecompositionTrace`.
"""

from __future__ import annotations

from kg.llm import AtomSelection, QuestionProposals
from kg.retrieval.base import AtomCandidate, Hit
from reasoning.core import Run
from reasoning.evidence import render_evidence
from reasoning.types import Answer, CandidateRecord, DecomposeStep, DecompositionStep, DecompositionTrace

__all__ = ["STOP_REASONS", "collect_candidates", "decompose", "render_candidates"]

STOP_REASONS = ("no_proposals", "sufficient", "no_candidates", "none_selected", "max_steps")


def collect_candidates(run: Run, proposals: list[str], *, k: int, threshold: float, exclude: list[str]
                       ) -> list[tuple[str, AtomCandidate]]:
    """Line 4: ``(proposal, candidate)`` pairs over all proposals, each atom once (its best score)."""
    best: dict[str, tuple[str, AtomCandidate]] = {}
    for proposal in proposals:
        for cand in run.ports.atoms.candidates(proposal, k=k, threshold=threshold, exclude_chunk_ids=exclude):
            if cand.hit.chunk_id in exclude:
                continue  # the port must exclude them; this is checked, not trusted
            if cand.atom_id not in best or cand.score > best[cand.atom_id][1].score:
                best[cand.atom_id] = (proposal, cand)
    return sorted(best.values(), key=lambda pc: -pc[1].score)


def render_candidates(candidates: list[tuple[str, AtomCandidate]]) -> str:
    return "\n".join(f"{i}. {cand.atom_text} (from: {cand.hit.title})" for i, (_, cand) in enumerate(candidates))


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
    context: list[Hit] = []
    trace.stop_reason = "max_steps"
    for t in range(1, s.max_steps + 1):
        step = DecompositionStep(index=t)
        trace.steps.append(step)
        proposed = run.task("question_proposals", QuestionProposals, question=run.question,
                            context=render_evidence(context), max_proposals=s.max_proposals)
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
        exclude = [h.chunk_id for h in context]
        candidates = collect_candidates(run, step.proposals, k=s.atom_k, threshold=s.atom_threshold,
                                        exclude=exclude)
        step.candidates = [
            CandidateRecord(proposal=p, atom_id=c.atom_id, atom_text=c.atom_text, chunk_id=c.hit.chunk_id,
                            title=c.hit.title, score=round(c.score, 6))
            for p, c in candidates
        ]
        if not candidates:
            trace.stop_reason = "no_candidates"
            break
        selection = run.task("atom_selection", AtomSelection, question=run.question,
                             context=render_evidence(context), candidates=render_candidates(candidates))
        step.reason = selection.reason
        if selection.index is None or not 0 <= selection.index < len(candidates):
            if selection.index is not None:
                step.reason = f"index {selection.index} is not a candidate; {selection.reason}".strip("; ")
            trace.stop_reason = "none_selected"
            break
        _, chosen = candidates[selection.index]
        step.selected, step.selected_atom = selection.index, chosen.atom_text
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
