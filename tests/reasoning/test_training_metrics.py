"""Algorithm 2 (UCB context sampling, S and V dictionaries), the SFT/DPO export formats, and the QA metrics."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from kg.app.evaluation.qa import best_f1, exact_match, normalize_answer, score_answer, token_scores
from kg.llm import LLM, make_llm
from kg.retrieval.base import AtomCandidate, Hit
from kg.settings import LLMSettings
from kg.testing import ScriptedLLMServer
from reasoning import ReasoningSettings
from reasoning.bindings import default_ports
from reasoning.training import (
    Trajectory,
    TrajectoryStep,
    UCBState,
    collect_trajectories,
    dpo_pairs,
    proposal_scores,
    sft_examples,
    write_training_data,
)
from tests.reasoning.conftest import ATOMS, EMBEDDER, Graph

# A question its cited chunk is about: training answers pass the citation check.
ASKED = "Which program did Renee Montagne co-host?"


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
    trajs = collect_trajectories(ASKED, ["Morning Edition"], question_id="q", store=graph.store, llm=llm,
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


def test_proposal_scores_average_per_state_and_pair_only_within_a_state() -> None:
    trajs = [_traj("q1", 1.0, "A?"), _traj("q1", 0.0, "A?", 1), _traj("q1", 0.2, "B?", 2), _traj("q1", 0.5, "C?", 3)]
    later = _traj("q1", 0.0, "D?", 4)
    later.steps[0].context_chunk_ids = ["c1"]  # another state: D is never paired with A, B or C
    (state, (messages, scores)), (other, (_, alone)) = proposal_scores([*trajs, later]).items()
    assert state == ("q1", ()) and other == ("q1", ("c1",)) and alone == {"D?": 0.0}
    assert scores == {"A?": 0.5, "B?": 0.2, "C?": 0.5} and messages == trajs[0].steps[0].messages
    pairs = {(json.loads(p.preferred_output[0]["content"])["proposals"][0],
              json.loads(p.non_preferred_output[0]["content"])["proposals"][0]) for p in dpo_pairs([*trajs, later])}
    assert pairs == {("A?", "B?"), ("C?", "B?")}  # A and C tie at 0.5: no pair


@dataclass
class ConstructedAtoms:
    """Algorithm 2's atom search on a constructed case: each proposal meets fixed (chunk, similarity) atoms."""

    graph: Graph
    found: dict[str, list[tuple[str, float]]]

    def candidates(self, query: str, *, k: int, threshold: float, exclude_chunk_ids: list[str]
                   ) -> list[AtomCandidate]:
        out = []
        for key, score in self.found.get(query, []):
            chunk_id, text = self.graph.chunks[key], self.graph.texts[key]
            if score >= threshold and chunk_id not in exclude_chunk_ids:
                hit = Hit(chunk_id=chunk_id, text=text, document_id=key, title=key, char_start=0,
                          char_end=len(text), score=score)
                out.append(AtomCandidate(atom_id=f"atom-{key}", atom_text=f"about {key}", score=score, hit=hit))
        return out[:k]


def test_collection_yields_dpo_pairs_and_keeps_s_and_v(
        graph: Graph, server: ScriptedLLMServer, tmp_path: Path) -> None:
    # Rollout 0 proposes "good" (renee at 0.9 is selected; bob at 0.4 is a near miss), then judges the context
    # sufficient and answers right. Rollout 1 starts from the same state, is shown bob (the argmax of S at
    # t = 1), proposes "bad" (inskeep at 0.8 selected, bob at 0.3 again a near miss) and answers wrong.
    server.script("question_proposals", {"proposals": ["good"]}, {"proposals": [], "sufficient": True},
                  {"proposals": ["bad"]}, {"proposals": [], "sufficient": True})
    server.script("atom_selection", {"index": 0, "reason": "r"})
    server.script("answer", {"answer": "Morning Edition [1]", "citations": [1]}, {"answer": "Wrong", "citations": []})
    settings = ReasoningSettings(rollouts=2, max_steps=2, atom_threshold=0.5, explore_threshold=0.1, ucb_alpha=1.0)
    atoms = ConstructedAtoms(graph, {"good": [("renee", 0.9), ("bob", 0.4)], "bad": [("inskeep", 0.8), ("bob", 0.3)]})
    ports = replace(default_ports(graph.store, EMBEDDER, None, settings), atoms=atoms)
    state = UCBState()
    llm = make_llm(LLMSettings(base_url=server.base_url, model="scripted-model", timeout_s=10.0, max_retries=1),
                   cache_dir=tmp_path)  # the response cache is on: proposal draws must not be served from it
    with llm:
        trajs = collect_trajectories(ASKED, ["Morning Edition"], question_id="q", store=graph.store,
                                     llm=llm, ports=ports, settings=settings, scorer=best_f1, state=state)
    assert [(t.score, t.steps[0].chosen_proposal, t.steps[0].sampled_chunk_id) for t in trajs] == [
        (1.0, "good", None), (0.0, "bad", graph.chunks["bob"])]
    assert state.scores == pytest.approx({graph.chunks["bob"]: 0.7, graph.chunks["renee"]: 0.0,
                                          graph.chunks["inskeep"]: 0.0})
    assert state.visits == {graph.chunks["renee"]: 2, graph.chunks["inskeep"]: 2}
    # t = 2 of rollout 1: UCB(bob) = 0.7 + sqrt(ln 2 / 1) beats UCB(renee) = 0 + sqrt(ln 2 / 2)
    assert trajs[1].steps[1].sampled_chunk_id == graph.chunks["bob"]
    sent = server.chat_requests("question_proposals")
    assert len(sent) == 4 and all(r.body["temperature"] == pytest.approx(0.7) for r in sent)
    assert graph.texts["bob"] in str(sent[2].body["messages"])  # the sampled chunk is shown to the proposer ...
    pairs = dpo_pairs(trajs)
    assert len(pairs) == 1
    pair = pairs[0]
    assert json.loads(pair.preferred_output[0]["content"])["proposals"] == ["good"]
    assert json.loads(pair.non_preferred_output[0]["content"])["proposals"] == ["bad"]
    assert graph.texts["bob"] not in str(pair.input["messages"])  # ... but the state's prompt has no sampled chunk
    assert pair.input["messages"] == trajs[1].steps[0].messages == trajs[0].steps[0].messages


def test_each_rollout_draws_fresh_proposals_with_the_cache_on(
        graph: Graph, server: ScriptedLLMServer, tmp_path: Path) -> None:
    # No candidates: S stays empty, so both rollouts send the very same prompt; each is still a real draw.
    server.script("question_proposals", {"proposals": ["first draw"]}, {"proposals": ["second draw"]})
    server.script("answer", {"answer": "unknown", "citations": []})
    settings = ReasoningSettings(rollouts=2)
    ports = replace(default_ports(graph.store, EMBEDDER, None, settings), atoms=ConstructedAtoms(graph, {}))
    llm = make_llm(LLMSettings(base_url=server.base_url, model="scripted-model", timeout_s=10.0, max_retries=1),
                   cache_dir=tmp_path)
    with llm:
        trajs = collect_trajectories(ASKED, ["x"], question_id="q", store=graph.store, llm=llm,
                                     ports=ports, settings=settings, scorer=best_f1)
    sent = server.chat_requests("question_proposals")
    assert len(sent) == 2 and sent[0].body["messages"] == sent[1].body["messages"]
    assert [t.steps[0].proposals for t in trajs] == [["first draw"], ["second draw"]]
    assert all(t.stop_reason == "no_candidates" for t in trajs)


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
