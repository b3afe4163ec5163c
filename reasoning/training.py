"""Decomposer training data (PIKE-RAG 5.3.3, Algorithm 2) and its export for fine-tuning.

Trajectories are collected per question with UCB context sampling: the score dictionary S holds, for
each chunk met through an atom whose similarity to the proposals was below delta (but above delta'), the
sum of those similarities; the visit dictionary V counts how often each chunk entered a context (initially 1).
At step t the chunk ``argmax_c S(c) + alpha * sqrt(ln t / V(c))`` (outside the context) is shown to the
proposer with the context, which diversifies the proposals; so does sampling them at
``proposal_temperature`` > 0, each rollout a fresh draw. S and V persist across a question's rollouts.
Each trajectory's answer is scored against the gold answers.

A state is the question with its context C(t-1) (the chunk ids, in order); its prompt is the proposer's
input as Algorithm 1 gives it at inference, without the sampled chunk. A proposal chosen in a state scores
the mean of the trajectories that chose it there. Export, in OpenAI's fine-tuning chat format: SFT examples
``{"messages": [..., assistant]}`` from the chosen proposals of the best-scored trajectories, and DPO pairs
``{"input": {"messages": [...]}, "preferred_output": [assistant], "non_preferred_output": [assistant]}``,
every higher- against every lower-scored proposal of the same state. A model fine-tuned on them is used
by naming it for the proposal task: ``LLMSettings(task_models={"question_proposals": "ft:..."})``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kg.llm import LLM, QUESTION_PROPOSALS, Message, QuestionProposals, detect_language
from kg.retrieval.base import Hit
from kg.store.base import GraphStore
from reasoning.core import Run, usage_snapshot
from reasoning.decompose import choose_candidate, collect_candidates
from reasoning.evidence import render_evidence, strip_markers
from reasoning.ports import Ports
from reasoning.settings import ReasoningSettings

__all__ = [
    "PreferencePair",
    "SFTExample",
    "Trajectory",
    "TrajectoryStep",
    "UCBState",
    "collect_trajectories",
    "dpo_pairs",
    "proposal_scores",
    "sft_examples",
    "write_training_data",
]

Scorer = Callable[[str, Sequence[str]], float]


@dataclass
class UCBState:
    """Algorithm 2's dictionaries: S (scores, 0 by default) and V (visits, 1 by default); ``hits`` keeps
    each scored chunk so a later rollout can show it."""

    scores: dict[str, float] = field(default_factory=dict)
    visits: dict[str, int] = field(default_factory=dict)
    hits: dict[str, Hit] = field(default_factory=dict)

    def ucb(self, chunk_id: str, t: int, alpha: float) -> float:
        return self.scores.get(chunk_id, 0.0) + alpha * math.sqrt(math.log(t) / self.visits.get(chunk_id, 1))

    def choose(self, t: int, alpha: float, exclude: Iterable[str] = ()) -> str | None:
        """Line 5: the chunk of S with the highest upper confidence bound (None when S has none left)."""
        skip = set(exclude)
        pool = [c for c in self.scores if c not in skip]
        return max(pool, key=lambda c: self.ucb(c, t, alpha)) if pool else None

    def add_score(self, chunk_id: str, similarity: float) -> None:
        """Line 13: a near-miss chunk's score grows by its best similarity."""
        self.scores[chunk_id] = self.scores.get(chunk_id, 0.0) + similarity

    def visit(self, chunk_id: str) -> None:
        """Lines 23-24: a chunk taken into the context has its score reset and one more visit."""
        self.scores[chunk_id] = 0.0
        self.visits[chunk_id] = self.visits.get(chunk_id, 1) + 1


class TrajectoryStep(BaseModel):
    """One proposal step: the state (question and context), the chunk sampled into the proposer's view,
    the state's prompt (the proposer's input at inference: no sampled chunk), and what was chosen."""

    index: int
    context_chunk_ids: list[str]
    sampled_chunk_id: str | None = None
    messages: list[dict[str, str]]
    proposals: list[str] = Field(default_factory=list)
    sufficient: bool = False
    chosen_proposal: str | None = None
    chosen_chunk_id: str | None = None


class Trajectory(BaseModel):
    question_id: str
    question: str
    rollout: int
    steps: list[TrajectoryStep] = Field(default_factory=list)
    stop_reason: str = "max_steps"
    answer: str = ""
    gold: list[str] = Field(default_factory=list)
    score: float = 0.0
    llm_calls: int = 0


class SFTExample(BaseModel):
    """OpenAI chat fine-tuning line."""

    messages: list[dict[str, str]]


class PreferencePair(BaseModel):
    """OpenAI preference (DPO) fine-tuning line."""

    input: dict[str, list[dict[str, str]]]
    preferred_output: list[dict[str, str]]
    non_preferred_output: list[dict[str, str]]


def _proposals(run: Run, context: list[Hit], sampled: Hit | None, draw: int
               ) -> tuple[list[Message], QuestionProposals]:
    """Line 6: the state's prompt, and proposals sampled from it with the sampled chunk added to the view.

    Each draw is its own ``sample`` of the request (its own cache entry): every rollout samples afresh at
    ``proposal_temperature``, and a re-run replays the same draws.
    """
    s = run.settings
    state, _ = run.messages("question_proposals", question=run.question, context=render_evidence(context),
                            max_proposals=s.max_proposals)
    shown = context if sampled is None else [*context, sampled]
    out = run.llm.run(QUESTION_PROPOSALS, lang=detect_language(run.question), sample=draw,
                      temperature=s.proposal_temperature, question=run.question, context=render_evidence(shown),
                      max_proposals=s.max_proposals)
    return state, out


def _rollout(run: Run, state: UCBState, rollout: int, qid: str, gold: Sequence[str], scorer: Scorer) -> Trajectory:
    s = run.settings
    traj = Trajectory(question_id=qid, question=run.question, rollout=rollout, gold=list(gold))
    before = usage_snapshot(run.llm).calls
    context: list[Hit] = []
    for t in range(1, s.max_steps + 1):
        used = [h.chunk_id for h in context]
        sampled = state.choose(t, s.ucb_alpha, exclude=used)
        messages, out = _proposals(run, context, state.hits[sampled] if sampled else None, rollout)
        proposals = list(dict.fromkeys(p.strip() for p in out.proposals if p.strip()))[: s.max_proposals]
        step = TrajectoryStep(index=t, context_chunk_ids=used, sampled_chunk_id=sampled, messages=list(messages),
                              proposals=proposals, sufficient=out.sufficient)
        traj.steps.append(step)
        if out.sufficient or not proposals:
            traj.stop_reason = "sufficient" if out.sufficient else "no_proposals"
            break
        found = collect_candidates(run, proposals, k=s.explore_k, threshold=s.explore_threshold, exclude=used)
        relevant = []
        for proposal, cand in found:
            state.hits[cand.hit.chunk_id] = cand.hit
            if cand.score >= s.atom_threshold:
                relevant.append((proposal, cand))
            else:
                state.add_score(cand.hit.chunk_id, cand.score)
        if not relevant:
            traj.stop_reason = "no_candidates"
            break
        choice = choose_candidate(run, context, relevant)
        if choice.index is None:
            traj.stop_reason = "none_selected"
            break
        proposal, chosen = relevant[choice.index]
        step.chosen_proposal, step.chosen_chunk_id = proposal, chosen.hit.chunk_id
        context.append(chosen.hit)
        state.visit(chosen.hit.chunk_id)
    answer = run.cited("decompose", context)
    traj.answer = strip_markers(answer.answer)
    traj.score = scorer(traj.answer, gold)
    traj.llm_calls = usage_snapshot(run.llm).calls - before
    return traj


def collect_trajectories(
    question: str, gold: Sequence[str], *, question_id: str, store: GraphStore, llm: LLM, ports: Ports,
    settings: ReasoningSettings, scorer: Scorer, state: UCBState | None = None,
) -> list[Trajectory]:
    """``settings.rollouts`` trajectories of Algorithm 2 for one question, sharing S and V (``state``,
    a fresh one unless given)."""
    run = Run(question=question, store=store, llm=llm, ports=ports, settings=settings)
    run.answerer.require_llm("collecting decomposer training data")
    shared = UCBState() if state is None else state
    return [_rollout(run, shared, r, question_id, gold, scorer) for r in range(settings.rollouts)]


def _assistant(proposal: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": json.dumps({"proposals": [proposal], "sufficient": False},
                                                         ensure_ascii=False)}]


def sft_examples(trajectories: Sequence[Trajectory], *, min_score: float = 0.5) -> list[SFTExample]:
    """Chosen proposals of each question's best trajectory, when it scored at least ``min_score``."""
    best: dict[str, Trajectory] = {}
    for traj in trajectories:
        if traj.score >= min_score and (traj.question_id not in best or traj.score > best[traj.question_id].score):
            best[traj.question_id] = traj
    return [
        SFTExample(messages=[*step.messages, *_assistant(step.chosen_proposal)])
        for traj in best.values() for step in traj.steps if step.chosen_proposal
    ]


def proposal_scores(trajectories: Sequence[Trajectory]
                    ) -> dict[tuple[str, tuple[str, ...]], tuple[list[Message], dict[str, float]]]:
    """Per state (question id, context chunk ids): its prompt, and each proposal chosen there with the mean
    score of the trajectories that chose it."""
    seen: dict[tuple[str, tuple[str, ...]], tuple[list[Message], dict[str, list[float]]]] = {}
    for traj in trajectories:
        for step in traj.steps:
            if step.chosen_proposal:
                key = (traj.question_id, tuple(step.context_chunk_ids))
                _, scores = seen.setdefault(key, (step.messages, {}))
                scores.setdefault(step.chosen_proposal, []).append(traj.score)
    return {key: (messages, {p: sum(v) / len(v) for p, v in scores.items()})
            for key, (messages, scores) in seen.items()}


def dpo_pairs(trajectories: Sequence[Trajectory]) -> list[PreferencePair]:
    """Every higher- against every lower-scored proposal chosen in the same state."""
    pairs = []
    for messages, scores in proposal_scores(trajectories).values():
        for (pa, sa), (pb, sb) in combinations(scores.items(), 2):
            if sa == sb:
                continue
            hi, lo = (pa, pb) if sa > sb else (pb, pa)
            pairs.append(PreferencePair(input={"messages": list(messages)}, preferred_output=_assistant(hi),
                                        non_preferred_output=_assistant(lo)))
    return pairs


def _jsonl(path: Path, rows: Iterable[BaseModel]) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(row.model_dump_json() + "\n")
            n += 1
    return n


def write_training_data(trajectories: Sequence[Trajectory], out: Path, *, min_score: float = 0.5
                        ) -> Mapping[str, Any]:
    """Write trajectories.jsonl, sft.jsonl and dpo.jsonl into ``out``; returns the counts and paths."""
    out.mkdir(parents=True, exist_ok=True)
    counts = {
        "trajectories": _jsonl(out / "trajectories.jsonl", trajectories),
        "sft": _jsonl(out / "sft.jsonl", sft_examples(trajectories, min_score=min_score)),
        "dpo": _jsonl(out / "dpo.jsonl", dpo_pairs(trajectories)),
    }
    return {"counts": counts, "files": {k: str(out / f"{k}.jsonl") for k in counts}}
