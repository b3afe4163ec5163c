"""Algorithm 1 against the real Neo4j with the scripted LLM over HTTP: every stop condition, exclusion
of chunks already in the context, the selection's 1-based numbers and its fallback, the call budget, and
the trace's contents."""

from __future__ import annotations

import json
from collections.abc import Callable

from kg.llm import LLM
from kg.testing import ScriptedLLMServer
from reasoning import ReasoningSettings, answer
from reasoning.types import Answer
from tests.reasoning.conftest import ATOMS, EMBEDDER, Graph

ANSWER = {"answer": "Morning Edition [1]", "citations": [1], "reasoning": "r"}


def ask(graph: Graph, llm: LLM, **settings: object) -> Answer:
    """The loop's mechanics from the paper's empty C0 unless a test sets ``seed_k``."""
    settings.setdefault("seed_k", 0)
    return answer("Bob Edwards hosted what show later hosted by Renee Montagne?", store=graph.store,
                  embedder=EMBEDDER, llm=llm, method="decompose",
                  settings=ReasoningSettings.model_validate(settings))


def user_text(server: ScriptedLLMServer, task: str, n: int) -> str:
    return str(server.chat_requests(task)[n].body["messages"][-1]["content"])


def test_none_selected_stops_and_answers_from_the_questions_own_retrieval(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals", {"proposals": [ATOMS["renee"][0]], "sufficient": False})
    server.script("atom_selection", {"index": None, "reason": "nothing helps"})
    server.script("answer", {"answer": "I cannot tell.", "citations": []})
    out = ask(graph, make_model(), atom_threshold=0.0)
    trace = out.decomposition
    assert trace.stop_reason == "none_selected; answered from the question's retrieval"
    assert len(trace.steps) == 1 and trace.steps[0].reason == "nothing helps"
    assert trace.steps[0].candidates[0].chunk_id == graph.chunks["renee"]
    # An answer from nothing is a guess: the question's own retrieval gives the answerer evidence.
    assert trace.context_chunk_ids and [h.chunk_id for h in out.evidence] == trace.context_chunk_ids
    assert "(none)" not in user_text(server, "answer", 0)


def test_nothing_known_yet_makes_the_question_the_first_atomic_query(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    # A small model's premature "sufficient" (or no proposal) before any knowledge is collected.
    server.script("question_proposals", {"proposals": [], "sufficient": True})
    server.script("atom_selection", {"index": 1, "reason": "r"})
    server.script("answer", ANSWER)
    out = ask(graph, make_model(), atom_threshold=0.0)
    steps = out.decomposition.steps
    assert steps[0].proposals == ["Bob Edwards hosted what show later hosted by Renee Montagne?"]
    assert steps[0].added_chunk_id and out.decomposition.stop_reason == "sufficient" and len(steps) == 2


def test_no_proposals_stops(graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals", {"proposals": [ATOMS["renee"][0]], "sufficient": False},
                  {"proposals": ["  "], "sufficient": False})
    server.script("atom_selection", {"index": 1, "reason": "r"})
    server.script("answer", {"answer": "unknown", "citations": []})
    out = ask(graph, make_model(), atom_threshold=0.0)
    assert out.decomposition.stop_reason == "no_proposals"
    assert len(server.chat_requests("atom_selection")) == 1


def test_no_candidates_below_threshold(graph: Graph, server: ScriptedLLMServer,
                                       make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals", {"proposals": ["zebra quantum xylophone"], "sufficient": False})
    server.script("answer", {"answer": "unknown", "citations": []})
    out = ask(graph, make_model(), atom_threshold=0.9)
    assert out.decomposition.stop_reason == "no_candidates; answered from the question's retrieval"
    assert out.decomposition.steps[0].candidates == []
    assert server.chat_requests("atom_selection") == []


def test_sufficient_after_one_chunk_then_cited_answer(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals",
                  {"proposals": [ATOMS["renee"][0]], "sufficient": False},
                  {"proposals": [], "sufficient": True})
    server.script("atom_selection", {"index": 1, "reason": "names the successor"})
    server.script("answer", ANSWER)
    out = ask(graph, make_model())
    trace = out.decomposition
    assert trace.stop_reason == "sufficient" and [s.index for s in trace.steps] == [1, 2]
    assert trace.context_chunk_ids == [graph.chunks["renee"]]
    # the second proposal call saw the chunk added in step 1
    assert graph.texts["renee"] in user_text(server, "question_proposals", 1)
    assert graph.texts["renee"] not in user_text(server, "question_proposals", 0)
    assert out.answer == "Morning Edition [1]"
    assert [(c.marker, c.chunk_id) for c in out.citations] == [(1, graph.chunks["renee"])]


def test_max_steps_and_exclusion_of_used_chunks(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    # Step 2 asks again for the chunk step 1 added: it must not be a candidate a second time.
    server.script("question_proposals", {"proposals": [ATOMS["renee"][0], ATOMS["bob"][0]], "sufficient": False},
                  {"proposals": [ATOMS["renee"][1], ATOMS["bob"][1]], "sufficient": False})
    server.script("atom_selection", {"index": 1, "reason": "best"})
    server.script("answer", ANSWER)
    out = ask(graph, make_model(), max_steps=2, atom_threshold=0.5)
    trace = out.decomposition
    assert trace.stop_reason == "max_steps" and len(trace.steps) == 2
    first, second = trace.steps
    assert first.added_chunk_id == graph.chunks["renee"]
    assert graph.chunks["renee"] not in {c.chunk_id for c in second.candidates}
    assert second.added_chunk_id == graph.chunks["bob"]
    assert trace.context_chunk_ids == [graph.chunks["renee"], graph.chunks["bob"]]
    assert len(server.chat_requests("question_proposals")) == 2


def test_trace_contents_usage_and_json(graph: Graph, server: ScriptedLLMServer,
                                       make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals",
                  {"proposals": [ATOMS["bob"][0]], "sufficient": False}, {"proposals": [], "sufficient": True})
    server.script("atom_selection", {"index": 1, "reason": "Bob's first show"})
    server.script("answer", ANSWER)
    out = ask(graph, make_model(), atom_threshold=0.0)
    step = out.decomposition.steps[0]
    assert step.proposals == [ATOMS["bob"][0]]
    top = step.candidates[0]
    assert top.atom_text == ATOMS["bob"][0] and top.score > 0.98 and top.proposal == ATOMS["bob"][0]
    assert len({c.chunk_id for c in step.candidates}) == len(step.candidates) > 1  # one candidate per chunk
    assert "1. " + ATOMS["bob"][0] in user_text(server, "atom_selection", 0)  # numbered from 1
    assert step.selected == 0 and step.selected_atom == ATOMS["bob"][0] and step.reason == "Bob's first show"
    assert step.added_chunk_id == graph.chunks["bob"] and step.added_title == "Bob Edwards"
    reported = server.reported_usage()
    assert out.usage.calls == reported["calls"] == 4
    assert out.usage.tokens == reported["prompt_tokens"] + reported["completion_tokens"]
    assert out.usage.by_task == {"question_proposals": 2, "atom_selection": 1, "answer": 1}
    text = out.decomposition.render()
    # The selected atom is the proposal itself: its exact cosine is 1.
    assert "stop: sufficient" in text and "Bob's first show" in text and "*[0] 1.000" in text
    restored = type(out).model_validate(json.loads(out.model_dump_json()))
    assert restored.decomposition == out.decomposition
    assert [s.kind for s in out.trace if s.kind == "decompose"] == ["decompose", "decompose"]


def test_fine_tuned_proposer_model_is_used_for_proposals(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals", {"proposals": [], "sufficient": True})
    server.script("answer", {"answer": "unknown", "citations": []})
    ask(graph, make_model(task_models={"question_proposals": "ft:decomposer-1"}))
    assert server.chat_requests("question_proposals")[0].body["model"] == "ft:decomposer-1"
    assert server.chat_requests("answer")[0].body["model"] == "scripted-model"


def test_a_number_that_is_no_candidate_falls_back_to_the_best_scored_and_goes_on(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals", {"proposals": [ATOMS["bob"][0]], "sufficient": False},
                  {"proposals": [ATOMS["renee"][0]], "sufficient": False}, {"proposals": [], "sufficient": True})
    server.script("atom_selection", {"index": 0, "reason": "zero-based habit"}, "this is not JSON at all")
    server.script("answer", ANSWER)
    out = ask(graph, make_model(max_retries=0), atom_threshold=0.0)
    first, second, third = out.decomposition.steps
    # index 0 is no candidate's number: the best-scored candidate is taken and the loop goes on
    assert first.selected == 0 and first.added_chunk_id == first.candidates[0].chunk_id == graph.chunks["bob"]
    assert first.reason.startswith("fallback: 0 is not a candidate number")
    # output that is no selection at all: the same fallback, not the end of the search
    assert second.selected == 0 and second.added_chunk_id == second.candidates[0].chunk_id
    assert second.reason.startswith("fallback: unusable selection")
    assert third.sufficient and out.decomposition.stop_reason == "sufficient"


def test_the_selected_number_counts_from_one(graph: Graph, server: ScriptedLLMServer,
                                             make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals", {"proposals": [ATOMS["bob"][0]], "sufficient": False},
                  {"proposals": [], "sufficient": True})
    server.script("atom_selection", {"index": 2, "reason": "the second"})
    server.script("answer", ANSWER)
    out = ask(graph, make_model(), atom_threshold=0.0)
    step = out.decomposition.steps[0]
    assert step.selected == 1 and step.added_chunk_id == step.candidates[1].chunk_id
    assert step.reason == "the second"


def test_repeated_proposals_stop_without_another_selection(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals", {"proposals": [ATOMS["bob"][0]], "sufficient": False},
                  {"proposals": [" " + ATOMS["bob"][0].upper()], "sufficient": False})
    server.script("atom_selection", {"index": 1, "reason": "r"})
    server.script("answer", ANSWER)
    out = ask(graph, make_model(), atom_threshold=0.0)
    trace = out.decomposition
    assert trace.stop_reason == "repeated_proposals" and len(trace.steps) == 2
    assert trace.steps[1].candidates == [] and trace.steps[1].added_chunk_id is None
    assert len(server.chat_requests("atom_selection")) == 1
    assert out.usage.calls == 4  # two proposals, one selection, the answer


def test_one_new_chunk_needs_no_selection_call(graph: Graph, server: ScriptedLLMServer,
                                               make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals", {"proposals": [ATOMS["inskeep"][0]], "sufficient": False},
                  {"proposals": [], "sufficient": True})
    server.script("answer", ANSWER)
    out = ask(graph, make_model(), atom_threshold=0.95)
    step = out.decomposition.steps[0]
    assert [c.chunk_id for c in step.candidates] == [graph.chunks["inskeep"]]
    assert step.added_chunk_id == graph.chunks["inskeep"] and step.selected == 0
    assert server.chat_requests("atom_selection") == []


def test_the_call_budget_ends_the_loop_and_keeps_a_call_for_the_answer(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    # A model that never stops proposing something new.
    server.script("question_proposals", *({"proposals": [q], "sufficient": False}
                                          for qs in ATOMS.values() for q in qs))
    server.script("atom_selection", {"index": 1, "reason": "r"})
    server.script("answer", ANSWER)
    out = ask(graph, make_model(), atom_threshold=0.0, max_calls=5)
    trace = out.decomposition
    assert trace.stop_reason == "call_budget"
    assert out.usage.calls <= 5 and out.usage.by_task["answer"] == 1
    # 2 + 2 calls paid for two full steps; a third proposal would leave no call for the answer
    assert len(trace.steps) == 2 and all(s.added_chunk_id for s in trace.steps)


def test_c0_is_the_questions_own_retrieval_and_the_loop_looks_past_it(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_proposals", {"proposals": [ATOMS["renee"][0]], "sufficient": False},
                  {"proposals": [], "sufficient": True})
    server.script("atom_selection", {"index": 1, "reason": "r"})
    server.script("answer", ANSWER)
    out = ask(graph, make_model(), atom_threshold=0.0, seed_k=2)
    trace = out.decomposition
    assert len(trace.seed_chunk_ids) == 2
    # The first proposal already sees C0, and no candidate repeats a chunk of it.
    assert "(none)" not in user_text(server, "question_proposals", 0)
    assert not {c.chunk_id for c in trace.steps[0].candidates} & set(trace.seed_chunk_ids)
    assert trace.context_chunk_ids[:2] == trace.seed_chunk_ids
    assert trace.steps[0].added_chunk_id in trace.context_chunk_ids[2:]
    assert "C0 (the question's retrieval)" in trace.render()


def test_the_question_is_a_standing_query_of_the_first_step(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    # The proposals find nothing (a small model asking about what C0 already says); the question's own atoms
    # below C0 are still candidates, so the loop does not stop with less than one-shot retrieval would give.
    server.script("question_proposals", {"proposals": ["zebra quantum xylophone"], "sufficient": False},
                  {"proposals": [], "sufficient": True})
    server.script("atom_selection", {"index": 1, "reason": "r"})
    server.script("answer", ANSWER)
    out = ask(graph, make_model(), atom_threshold=0.2, seed_k=1)
    trace = out.decomposition
    question = "Bob Edwards hosted what show later hosted by Renee Montagne?"
    first = trace.steps[0]
    assert first.candidates and {c.proposal for c in first.candidates} == {question}
    assert first.added_chunk_id is not None and first.added_chunk_id not in trace.seed_chunk_ids
    assert trace.context_chunk_ids == [*trace.seed_chunk_ids, first.added_chunk_id]
