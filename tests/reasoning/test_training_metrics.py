"""Algorithm 2 (UCB context sampling, S and V dictionaries), the SFT/DPO export formats, and the QA metrics."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest

from kg.evaluation.qa import best_f1, exact_match, normalize_answer, score_answer, token_scores
from kg.llm import LLM
from kg.testing import ScriptedLLMServer
from reasoning import ReasoningSettings
from reasoning.bindings import default_ports
from reasoning.training import (
    Trajectory,
    TrajectoryStep,
    UCBState,
    collect_trajectories,
    dpo_pairs,
    sft_examples,
    write_training_data,
)
from tests.reasoning.conftest import ATOMS, EMBEDDER, Graph


def test_ucb_choice_on_a_constructed_case() -> None:
    state = UCBState(scores={"a": 0.9, "b": 0.5, "c": 0.4}, visits={"a": 9, "b": 1})
    assert state.choose(1, alpha=1.0) == "a"  # ln 1 = 0: pure exploitation
    # t = 10, alpha = 1: a = 0.9 + sqrt(ln10/9) = 1.406; b = 0.5 + sqrt(ln10) = 2.017; c the same as b - 0.1
    assert state.ucb("a", 10, 1.0) == pytest.approx(0.9 + math.sqrt(math.log(10) / 9))
    assert state.choose(10, alpha=1.0) == "b"
    assert state.choose(10, alpha=1.0, exclude={"b"}) == "c"
    assert state.choose(10, alpha=0.0) == "a"
    state.visit("b")
    assert state.scores["b"] == 0.0 and state.visits["b"] == 2
    state.add_score("d", 0.3)
    state.add_score("d", 0.2)
    assert state.scores["d"] == pytest.approx(0.5)
    assert UCBState().choose(3, 1.0) is None


def _traj(qid: str, score: float, proposal: str, rollout: int = 0) -> Trajectory:
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": f"Question: {qid}"}]
    return Trajectory(question_id=qid, question=qid, rollout=rollout, score=score, steps=[
        TrajectoryStep(index=1, context_chunk_ids=[], messages=messages, proposals=[proposal, "other"],
                       chosen_proposal=proposal, chosen_chunk_id="c1")])


def test_sft_and_dpo_export_formats(tmp_path: Path) -> None:
    trajs = [_traj("q1", 1.0, "Who hosted X?"), _traj("q1", 0.2, "When was X?", 1), _traj("q2", 0.1, "Z?")]
    sft = sft_examples(trajs)
    assert len(sft) == 1
    line = json.loads(sft[0].model_dump_json())
    assert [m["role"] for m in line["messages"]] == ["system", "user", "assistant"]
    assert json.loads(line["messages"][-1]["content"]) == {"proposals": ["Who hosted X?"], "sufficient": False}
    pairs = dpo_pairs(trajs)
    assert len(pairs) == 1
    pair = json.loads(pairs[0].model_dump_json())
    assert set(pair) == {"input", "preferred_output", "non_preferred_output"}
    assert pair["input"]["messages"][-1]["content"] == "Question: q1"
    assert json.loads(pair["preferred_output"][0]["content"])["proposals"] == ["Who hosted X?"]
    assert json.loads(pair["non_preferred_output"][0]["content"])["proposals"] == ["When was X?"]
    summary = write_training_data(trajs, tmp_path)
    assert summary["counts"] == {"trajectories": 3, "sft": 1, "dpo": 1}
    assert len((tmp_path / "dpo.jsonl").read_text().splitlines()) == 1


def test_collect_trajectories_scores_answers_and_samples_near_misses(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    # Proposal = a "renee" atom (selected, >= delta) plus loose words that meet other atoms below delta.
    proposal = ATOMS["renee"][0]
    server.script("question_proposals", {"proposals": [proposal, "Morning Edition host"], "sufficient": False},
                  {"proposals": [], "sufficient": True})
    server.script("atom_selection", {"index": 0, "reason": "r"})
    server.script("answer", {"answer": "Morning Edition [1]", "citations": [1]}, {"answer": "Wrong", "citations": []})
    settings = ReasoningSettings(rollouts=2, explore_threshold=0.0, atom_threshold=0.9, max_steps=2)
    llm = make_model()
    trajs = collect_trajectories("Which show?", ["Morning Edition"], question_id="q", store=graph.store, llm=llm,
                                 ports=default_ports(graph.store, EMBEDDER, None, settings), settings=settings,
                                 scorer=best_f1)
    assert [t.rollout for t in trajs] == [0, 1]
    first = trajs[0]
    assert first.steps[0].chosen_proposal == proposal and first.steps[0].chosen_chunk_id == graph.chunks["renee"]
    assert first.score == 1.0 and first.answer == "Morning Edition"
    assert first.steps[0].sampled_chunk_id is None  # S is empty at the start
    # near-miss chunks scored in rollout 0 are sampled into rollout 1's first proposal context
    sampled = trajs[1].steps[0].sampled_chunk_id
    assert sampled is not None and sampled != graph.chunks["renee"]
    assert trajs[1].score == 0.0


@pytest.mark.parametrize(("pred", "gold", "em", "f1"), [
    ("The Morning Edition.", "Morning Edition", 1.0, 1.0),
    ("Morning Edition show [2]", "morning edition", 0.0, 0.8),
    ("yes", "no", 0.0, 0.0),
])
def test_em_and_f1_known_cases(pred: str, gold: str, em: float, f1: float) -> None:
    assert exact_match(pred, gold) == em and token_scores(pred, gold)[2] == pytest.approx(f1)


def test_best_over_aliases_and_normalisation() -> None:
    assert normalize_answer("  An Apple, the PIE! [3] ") == "apple pie"
    scores = score_answer("New York City", ["NYC", "New York City", "New York"])
    assert scores.em == 1.0 and scores.f1 == 1.0 and scores.precision == 1.0 and scores.recall == 1.0
    partial = score_answer("New York", ["New York City", "Big Apple"])
    assert partial.em == 0.0 and partial.precision == 1.0 and partial.recall == pytest.approx(2 / 3)
    assert partial.f1 == pytest.approx(0.8)
    assert score_answer("x", []).f1 == 0.0
