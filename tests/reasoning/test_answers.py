"""Cited answers and the baselines on the real Neo4j with the scripted LLM: citations only point at given
text, invalid markers are dropped and reported, offline answers are extractive and say so."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pytest

from kg.errors import ReasoningError
from kg.llm import LLM, OfflineLLM
from kg.retrieval.base import Hit, RetrievalFilter
from kg.testing import ScriptedLLMServer
from reasoning import METHODS, ReasoningSettings, answer
from reasoning.bindings import default_ports
from reasoning.evidence import (
    MARKER,
    MARKER_GROUP,
    check_citations,
    ground_citations,
    marker_numbers,
    strip_markers,
)
from reasoning.extract import extract, sentences_of
from reasoning.ports import ChunkRetriever
from tests.reasoning.conftest import EMBEDDER, Graph

QUESTION = "Who was the first host of Morning Edition on National Public Radio?"


def hit(n: int, text: str) -> Hit:
    return Hit(chunk_id=f"c{n}", text=text, document_id="d", title=f"T{n}", page=n, char_start=10 * n,
               char_end=10 * n + len(text), score=1.0)


def test_check_citations_keeps_given_markers_and_maps_claims() -> None:
    evidence = [hit(1, "Bob Edwards hosted it."), hit(2, "Montagne followed.")]
    text, cites, dropped = check_citations("Bob Edwards was first [1][4]. Montagne came later [2]. End [0].",
                                           evidence, listed=[2, 9])
    assert dropped == [0, 4, 9]
    assert "[4]" not in text and "[0]" not in text and "[1]" in text and "[2]" in text
    assert [(c.marker, c.chunk_id, c.page, c.char_start) for c in cites] == [(1, "c1", 1, 10), (2, "c2", 2, 20)]
    assert cites[0].claims == ["Bob Edwards was first."] and cites[1].claims == ["Montagne came later."]
    assert cites[0].text == evidence[0].text
    assert check_citations("No evidence [1].", []) == ("No evidence.", [], [1])


@pytest.mark.parametrize(("written", "normalised", "dropped"), [
    ("Both [1, 3].", "Both [1][3].", []),
    ("Both [1\uff0c3] and [2\u30014].", "Both [1][3] and [2][4].", []),  # full-width comma, 、
    ("Range [2-4].", "Range [2][3][4].", []),
    ("Range [3\u20136].", "Range [3][4].", [5, 6]),  # en dash
    ("Adjacent [1][2].", "Adjacent [1][2].", []),
    ("Full width 【2】 and \uff3b4\uff3d.", "Full width [2] and [4].", []),
    ("Mixed [1, 2-3, 9].", "Mixed [1][2][3].", [9]),
    ("Gone [0, 7] here.", "Gone here.", [0, 7]),
    ("Years [1900-1990] are no range.", "Years are no range.", [1900, 1990]),
])
def test_check_citations_reads_lists_ranges_and_full_width_markers(written: str, normalised: str,
                                                                    dropped: list[int]) -> None:
    evidence = [hit(n, f"Fact number {n}.") for n in range(1, 5)]
    text, cites, lost = check_citations(written, evidence)
    assert (text, lost) == (normalised, dropped)
    assert [c.marker for c in cites] == sorted({int(m) for m in MARKER.findall(normalised)})
    assert all(c.text == evidence[c.marker - 1].text and c.claims for c in cites)
    assert marker_numbers("4-2") == [4, 2] and not MARKER_GROUP.search(strip_markers(written))


def test_check_citations_limited_to_allowed_numbers() -> None:
    evidence = [hit(n, f"Fact number {n}.") for n in range(1, 4)]
    text, cites, dropped = check_citations("A [1, 2]. B [3].", evidence, listed=[2], allowed={1, 3})
    assert (text, [c.marker for c in cites], dropped) == ("A [1]. B [3].", [1, 3], [2])


def test_offline_extraction_takes_a_short_span_across_the_top_hits() -> None:
    texts = ["Paris is large. Rain fell on the\nradio studio.",
             "Morning Edition started in 1979. Its first host was Bob Edwards, on National Public Radio."]
    pick = extract(QUESTION, texts)
    assert (pick.span, pick.hit) == ("Bob Edwards", 1)  # a name not in the question, from the second hit
    assert pick.sentence == "Its first host was Bob Edwards, on National Public Radio." and 0.5 < pick.support <= 1
    assert sentences_of(texts[0]) == ["Paris is large.", "Rain fell on the radio studio."]  # soft wrap
    assert extract("When did Morning Edition start?", texts).span == "1979"
    assert extract("How many hosts?", []).span == ""


@pytest.mark.parametrize("question", ["In which year was Bob Edwards born?", "How many hosts did it have?",
                                      "How often is Morning Edition broadcast?"])
def test_offline_extraction_says_nothing_when_the_evidence_has_no_date_count_or_frequency(question: str) -> None:
    # The sentence that best matches the question is no answer to "which year" when it names none.
    texts = ["Bob Edwards was a radio host. Morning Edition is a news program on National Public Radio."]
    pick = extract(question, texts)
    assert pick.span == "" and pick.sentence.startswith(("Bob Edwards", "Morning Edition"))


@pytest.mark.parametrize(("question", "said"), [
    ("Are Paris and Lyon both cities in France?", "yes"),
    ("Are Paris and Berlin both cities in France?", "no"),
])
def test_offline_yes_no_checks_every_named_entity(question: str, said: str) -> None:
    texts = ["Paris is the capital city of France.", "Lyon is a city in France.", "Berlin is in Germany."]
    assert extract(question, texts).span == said


def test_offline_choice_picks_the_better_supported_option() -> None:
    texts = ["Morning Edition is a radio news program.", "Weekend Edition is broadcast on weekends."]
    assert extract("Which is a radio news program, Weekend Edition or Morning Edition?", texts).span == \
        "Morning Edition"
    clubs = ["The Larch Rovers were founded in 1911 in Dunmore.", "Kestrel Athletic was founded in 1958."]
    assert extract("Which club was founded first, The Larch Rovers or Kestrel Athletic?", clubs).span == \
        "The Larch Rovers"
    assert extract("Which club was founded later, The Larch Rovers or Kestrel Athletic?", clubs).span == \
        "Kestrel Athletic"


def test_naive_r_citations_only_point_at_text_given_to_the_llm(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("answer", {"answer": "Bob Edwards [1], per [7].", "citations": [1, 7]})
    out = answer(QUESTION, store=graph.store, embedder=EMBEDDER, llm=make_model(), method="naive-r")
    assert out.method == "naive-r" and not out.offline
    assert out.dropped_markers == [7] and "[7]" not in out.answer
    assert any(step.kind == "citations_dropped" for step in out.trace)
    prompt = str(server.chat_requests("answer")[0].body["messages"][-1]["content"])
    assert [c.marker for c in out.citations] == [1]
    for c in out.citations:
        assert c.text in prompt and c.text == out.evidence[c.marker - 1].text
        assert c.claims and c.char_end > c.char_start
    assert len(out.evidence) <= 16 and all(h.score >= 0.2 for h in out.evidence)


def test_the_models_short_answer_is_kept_beside_the_prose_and_dropped_when_the_answer_abstains(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("answer",
                  {"answer": "Bob Edwards was the first host [1].", "citations": [1], "short": " Bob Edwards "},
                  {"answer": "The sources do not say.", "citations": [], "short": "Noah Adams"})
    model = make_model()
    out = answer(QUESTION, store=graph.store, embedder=EMBEDDER, llm=model, method="naive-r")
    assert out.short_answer == "Bob Edwards" and not out.abstained
    other = answer("Who hosted it after 2016?", store=graph.store, embedder=EMBEDDER, llm=model, method="naive-r")
    assert other.abstained and other.short_answer is None  # nothing stands behind it


def test_zero_shot_cot_has_no_evidence_so_no_citation_survives(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("zero_shot_cot", {"reasoning": "NPR history", "answer": "Bob Edwards [1]", "citations": [1]})
    out = answer(QUESTION, store=graph.store, embedder=EMBEDDER, llm=make_model(), method="zero-shot-cot")
    assert out.answer == "Bob Edwards" and out.citations == [] and out.dropped_markers == [1]
    assert out.evidence == [] and out.usage.calls == 1


def test_self_ask_r_retrieves_per_follow_up_and_cites_gathered_evidence(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("self_ask",
                  {"follow_up": "Who was the first host of Morning Edition?"},
                  {"final_answer": "Bob Edwards [1]", "citations": [1]})
    server.script("answer", {"answer": "Bob Edwards [1]", "citations": [1]})
    out = answer(QUESTION, store=graph.store, embedder=EMBEDDER, llm=make_model(), method="self-ask-r")
    assert out.stop_reason == "final_answer" and out.answer == "Bob Edwards [1]"
    assert out.evidence and out.citations[0].chunk_id == out.evidence[0].chunk_id
    second = str(server.chat_requests("self_ask")[1].body["messages"][-1]["content"])
    assert "Intermediate answer: Bob Edwards [1]" in second and out.evidence[0].text in second
    assert out.usage.by_task == {"self_ask": 2, "answer": 1}


def test_self_ask_r_retrieves_before_a_final_answer_even_when_the_model_answers_at_once(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    # A small model's closed-book answer on the first step: the question is then the first follow-up.
    server.script("self_ask", {"final_answer": "Noah Adams", "citations": []},
                  {"final_answer": "Bob Edwards [1]", "citations": [1]})
    server.script("answer", {"answer": "Bob Edwards hosted it [1].", "citations": [1]})
    out = answer(QUESTION, store=graph.store, embedder=EMBEDDER, llm=make_model(), method="self-ask-r")
    follow = next(s for s in out.trace if s.kind == "self_ask_follow_up")
    assert follow.detail["follow_up"] == QUESTION and follow.detail["retrieved"]
    assert out.evidence and out.usage.by_task == {"self_ask": 2, "answer": 1}


def test_self_ask_without_retrieval_uses_own_knowledge(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("self_ask", {"follow_up": "Who hosted NPR mornings?"}, {"final_answer": "Bob Edwards"})
    server.script("zero_shot_cot", {"answer": "Bob Edwards", "reasoning": "memory"})
    out = answer(QUESTION, store=graph.store, embedder=EMBEDDER, llm=make_model(), method="self-ask")
    assert out.answer == "Bob Edwards" and out.evidence == [] and out.usage.by_task["zero_shot_cot"] == 1


def test_naive_hr_adds_chunks_found_through_atoms(graph: Graph, server: ScriptedLLMServer,
                                                  make_model: Callable[..., LLM]) -> None:
    server.script("answer", {"answer": "Bob Edwards [1]", "citations": [1]})
    out = answer("Which program did Bob Edwards host first?", store=graph.store, embedder=EMBEDDER,
                 llm=make_model(), method="naive-hr")
    assert graph.chunks["bob"] in {h.chunk_id for h in out.evidence}
    assert {s.path for h in out.evidence for s in h.sources} <= {"chunk", "atom"}
    assert len({h.chunk_id for h in out.evidence}) == len(out.evidence)


@dataclass
class Recorded:
    """A retrieval port that notes the budget ``k`` each call asks of the real retriever it wraps."""

    inner: ChunkRetriever
    budgets: list[int] = field(default_factory=list)

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        self.budgets.append(k)
        return self.inner.retrieve(question, k=k, where=where)


def test_r_and_hr_retrieve_with_the_paper_budgets(graph: Graph) -> None:
    settings = ReasoningSettings()
    assert (settings.flat_k, settings.flat_threshold, settings.hier_k, settings.hier_threshold, settings.atom_k,
            settings.hr_k) == (16, 0.2, 8, 0.5, 4, 12)
    real = default_ports(graph.store, EMBEDDER, None, settings)
    for method, expected in [("naive-r", 16), ("self-ask-r", 16), ("naive-hr", 12), ("self-ask-hr", 12)]:
        flat, hierarchical = Recorded(real.flat), Recorded(real.hierarchical)
        ports = replace(real, flat=flat, hierarchical=hierarchical)
        answer(QUESTION, store=graph.store, embedder=EMBEDDER, llm=OfflineLLM(), method=method, ports=ports)
        assert flat.budgets + hierarchical.budgets == [expected], method
    # H-R keeps every chunk of both paths: 8 direct plus the 4 found through the question's atoms.
    found = real.hierarchical.retrieve(QUESTION, k=settings.hr_k)
    assert found == real.hierarchical.retrieve_hierarchical(QUESTION)


@pytest.mark.parametrize("method", [m for m in METHODS if m != "auto"])
def test_every_method_offline_is_extractive_and_says_so(graph: Graph, method: str) -> None:
    out = answer(QUESTION, store=graph.store, embedder=EMBEDDER, llm=OfflineLLM(), method=method)
    assert out.offline and out.method == method and out.usage.calls == 0
    if out.evidence:
        marker = out.citations[0].marker
        assert out.answer.endswith(f"[{marker}]") and out.citations[0].text == out.evidence[marker - 1].text
        # The sentence the span was taken from is named when the chunk it came from is the one cited (a span
        # its chunk does not support is cited to the chunk that does: reasoning.citations.hold).
        assert out.supporting_sentence or out.unsupported_citations
        if out.supporting_sentence:
            assert out.supporting_sentence in " ".join(out.citations[0].text.split())
        assert any(step.kind == "offline_extractive" for step in out.trace)


def test_unknown_method_and_empty_question_are_refused(graph: Graph) -> None:
    with pytest.raises(ReasoningError, match="unknown method"):
        answer(QUESTION, store=graph.store, embedder=EMBEDDER, llm=OfflineLLM(), method="magic")
    with pytest.raises(ReasoningError, match="empty"):
        answer("  ", store=graph.store, embedder=EMBEDDER, llm=OfflineLLM(), settings=ReasoningSettings())


def _given(*texts: str) -> list[Hit]:
    return [Hit(chunk_id=f"c{i}", text=t, document_id="d", title="T", char_start=0, char_end=len(t), score=1.0)
            for i, t in enumerate(texts, 1)]


def test_a_wrongly_cited_answer_gets_the_chunk_that_states_it() -> None:
    given = _given("Every gearbox is inspected twice a year.", "The gearbox repair of T-14 cost EUR 84,000.")
    question = "How much did the gearbox repair of turbine T-14 cost?"
    cited = check_citations("The repair cost 84000 [1].", given)[1]
    assert ground_citations("The repair cost 84000 [1].", question, given, cited) == [2]
    # A cited chunk that states the answer is left alone; so is an answer that cites nothing.
    right = check_citations("It cost EUR 84,000 [2].", given)[1]
    assert ground_citations("It cost EUR 84,000 [2].", question, given, right) == []
    assert ground_citations("The sources do not say.", question, given, []) == []
    # One shared ordinary word is no evidence of where an answer came from.
    assert ground_citations("It was inspected [2].", "When?", given, check_citations("x [2]", given)[1]) == []


def test_a_source_left_uncited_for_part_of_the_answer_is_cited_too() -> None:
    given = _given("The Nordvik wind farm runs twelve turbines; turbine T-14 lost its gearbox.",
                   "After the failure of T-14, Nordvik added an oil temperature alarm to each gearbox.")
    text = "Nordvik added an oil temperature alarm to each gearbox [1]."
    cited = check_citations(text, given)[1]
    assert ground_citations(text, "Which alarm was added after the failure?", given, cited) == [2]
