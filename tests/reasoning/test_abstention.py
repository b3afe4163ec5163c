"""Answers held to their sources: a citation must support the sentence that carries it (key tokens, and an LLM
entailment check for the close calls when enabled); unsupported citations are dropped and counted, and an
answer with no supported citation left abstains, offline and with an LLM, on the unanswerable questions of
``unanswerable.json`` too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kg.llm import LLM, OfflineLLM
from kg.retrieval.base import Hit
from kg.testing import ScriptedLLMServer
from reasoning import METHODS, ReasoningSettings, answer
from reasoning.citations import (
    ABSTENTIONS,
    Claim,
    EntailmentVerifier,
    TokenVerifier,
    abstention,
    hold_to_sources,
    key_tokens,
)
from reasoning.evidence import check_citations
from reasoning.extractive_answerer import OfflineAnswerer
from reasoning.llm_answerer import LLMAnswerer
from reasoning.types import Answer
from tests.reasoning.conftest import DOCS, EMBEDDER, Graph

UNANSWERABLE = json.loads((Path(__file__).with_name("unanswerable.json")).read_text("utf-8"))["questions"]
HISTORY = "| year | gearbox failures |\n|---|---|\n| 2023 | 12 |\n| 2024 | 13 |"
TURBINES = ("Turbine T-14 lost its gearbox in March 2023 after a bearing overheated; the repair took 12 days and "
            "cost EUR 84,000. Vestas supplied the replacement gearbox.")
POLICY = ("Every gearbox is inspected twice a year. After the failure of turbine T-14, the Nordvik wind farm added "
          "an oil temperature alarm to each gearbox. The alarm triggers at 80 degrees.")


def hits(*texts: str) -> list[Hit]:
    return [Hit(chunk_id=f"c{i}", text=t, document_id="d", title=f"T{i}", char_start=0, char_end=len(t), score=1.0)
            for i, t in enumerate(texts, 1)]


def written(question: str, text: str, evidence: list[Hit], listed: tuple[int, ...] = (), *,
            method: str = "naive-r", offline: bool = False) -> Answer:
    """The answer as a method hands it over: markers normalised, citations built, not yet held."""
    cleaned, citations, _ = check_citations(text, evidence, listed)
    return Answer(question=question, answer=cleaned, method=method, offline=offline, citations=citations,
                  evidence=evidence)


def test_the_data_file_holds_unanswerable_questions_over_both_corpora() -> None:
    assert 5 <= len(UNANSWERABLE) <= 8
    assert all(q["answers"] == [] and q["unanswerable"] is True for q in UNANSWERABLE)
    assert {q["corpus"] for q in UNANSWERABLE} == {"reasoning", "demo"}


def test_a_number_is_supported_only_by_a_passage_that_states_it_with_what_was_asked() -> None:
    check = TokenVerifier()
    assert check.support(Claim("13", "How many gearbox failures were there in 2024?", HISTORY)).supported
    # The case: a count cited from a chunk that holds it, but for another year or another question.
    assert not check.support(Claim("13", "How many gearbox failures were there in 2012?", HISTORY)).supported
    assert not check.support(Claim("13", "Who is the CEO of Borealis Wind?", HISTORY)).supported
    # Two rows of a table are two records: 12 is not 2024's count.
    assert not check.support(Claim("12", "How many gearbox failures were there in 2024?", HISTORY)).supported


def test_a_passage_that_only_repeats_the_answers_words_is_not_about_the_question() -> None:
    bob = DOCS["bob"][1]
    check = TokenVerifier()
    asked = "Who directed the feature film about Morning Edition?"
    assert not check.support(Claim("Morning Edition on National Public Radio", asked, bob, whole_answer=True)).supported
    assert check.support(Claim("Bob Edwards", "Who was the first host of Morning Edition?", bob,
                               whole_answer=True)).supported


def test_cjk_claims_are_read_by_ideograph_pairs() -> None:
    source = "北湖风电场位于浙江省,共有八台风机。2022年7月,台风导致三号风机的叶片断裂。"
    assert {"叶片", "风机"} <= key_tokens(source)
    check = TokenVerifier()
    assert check.support(Claim("2022年7月台风导致三号风机叶片断裂。", "三号风机出了什么事?", source)).supported
    assert not check.support(Claim("五号风机的齿轮箱在2019年更换。", "五号风机出了什么事?", source)).supported
    assert abstention("三号风机出了什么事?") == ABSTENTIONS["zh"]


def test_unsupported_markers_are_dropped_per_sentence_and_counted() -> None:
    evidence = hits(TURBINES, POLICY)
    question = "What happened after the failure of turbine T-14?"
    out = hold_to_sources(written(question, "The repair of T-14 cost EUR 84,000 [1][2]. An oil temperature alarm "
                                            "was added to each gearbox [2]. It triggers at 95 degrees [2].",
                                  evidence), TokenVerifier())
    assert out.answer == ("The repair of T-14 cost EUR 84,000 [1]. An oil temperature alarm was added to each "
                          "gearbox [2]. It triggers at 95 degrees.")
    assert out.unsupported_citations == 2 and not out.abstained
    assert [(c.marker, c.claims) for c in out.citations] == [
        (1, ["The repair of T-14 cost EUR 84,000."]), (2, ["An oil temperature alarm was added to each gearbox."])]


def test_a_sentence_citing_the_wrong_given_chunk_cites_the_one_that_holds_it() -> None:
    evidence = hits(DOCS["renee"][1], DOCS["bob"][1])
    question = "Who was the first host of Morning Edition on National Public Radio?"
    # Chunk 1 names Bob Edwards as a longtime host, not as the first one on NPR: chunk 2 says that.
    extracted = written(question, "Bob Edwards [1]", evidence, offline=True).model_copy(
        update={"supporting_sentence": "Montagne and Inskeep succeeded longtime host Bob Edwards."})
    out = hold_to_sources(extracted, TokenVerifier())
    assert (out.answer, out.unsupported_citations, out.abstained) == ("Bob Edwards [2]", 1, False)
    assert [c.chunk_id for c in out.citations] == ["c2"] and out.supporting_sentence is None


def test_a_marker_may_support_only_the_clause_it_ends() -> None:
    evidence = hits(TURBINES, POLICY)
    question = "Which alarm was added after the failure of the turbine that Vestas supplied a gearbox for?"
    out = hold_to_sources(written(question, "Vestas supplied the gearbox of T-14 [1], and after its failure an "
                                            "oil temperature alarm was added [2].", evidence), TokenVerifier())
    assert [c.marker for c in out.citations] == [1, 2] and out.unsupported_citations == 0


def test_an_answer_left_with_no_supported_citation_abstains() -> None:
    evidence = hits(POLICY, HISTORY)
    question = "How many turbines does Borealis Wind run in Norway?"
    out = hold_to_sources(written(question, "13 [2]", evidence), TokenVerifier())
    assert out.abstained and out.answer == ABSTENTIONS["en"] and out.citations == []
    assert out.unsupported_citations == 1 and out.evidence == evidence
    # Citing nothing is how the model says the sources do not hold the answer; no evidence at all is the same.
    said = hold_to_sources(written(question, "The sources do not say.", evidence), TokenVerifier())
    assert said.abstained and said.unsupported_citations == 0
    assert hold_to_sources(written(question, "Twelve [1].", []), TokenVerifier()).abstained


def test_a_listed_number_missing_from_the_text_must_support_the_answer() -> None:
    evidence = hits(TURBINES, POLICY)
    question = "What did the gearbox repair of T-14 cost?"
    out = hold_to_sources(written(question, "EUR 84,000.", evidence, listed=(1, 2)), TokenVerifier())
    assert [c.marker for c in out.citations] == [1] and out.unsupported_citations == 1 and not out.abstained


def test_closed_book_answers_and_abstentions_are_left_alone() -> None:
    closed = written("Who was the first host?", "Bob Edwards", [], method="zero-shot-cot")
    assert hold_to_sources(closed, TokenVerifier()) == closed
    offline = written("Who was the first host?", "", [], method="zero-shot-cot", offline=True)
    # The extractive answerer searched for it, and found nothing.
    assert hold_to_sources(offline, TokenVerifier(), closed_book=OfflineAnswerer.answers_closed_book).abstained
    assert hold_to_sources(closed, TokenVerifier(), closed_book=LLMAnswerer.answers_closed_book) == closed
    done = closed.model_copy(update={"method": "creative", "abstained": True, "answer": "needs an LLM"})
    assert hold_to_sources(done, TokenVerifier()) == done


def test_the_entailment_check_settles_only_close_calls(server: ScriptedLLMServer,
                                                       make_model: Callable[..., LLM]) -> None:
    renee = DOCS["renee"][1]
    close = Claim("Bob Edwards left the program for satellite radio.", "Why did Bob Edwards leave?", renee)
    clear = Claim("Montagne and Inskeep succeeded Bob Edwards.", "Who succeeded Bob Edwards?", renee)
    assert TokenVerifier().support(close).supported  # half of its key tokens are there: tokens alone let it pass
    server.script("citation_support", {"supported": False})
    verifier = EntailmentVerifier(make_model())
    assert verifier.support(close).by == "llm" and not verifier.support(close).supported
    assert verifier.support(clear).by == "tokens" and verifier.support(clear).supported
    requests = server.chat_requests("citation_support")
    assert len(requests) == 2  # the close call, asked twice above; the clear one never
    prompt = str(requests[0].body["messages"][-1]["content"])
    assert "satellite radio" in prompt and renee in prompt


@pytest.mark.parametrize("method", [m for m in METHODS if m != "auto"])
def test_every_method_abstains_offline_on_the_unanswerable_questions(graph: Graph, method: str) -> None:
    for q in (q for q in UNANSWERABLE if q["corpus"] == "reasoning"):
        out = answer(q["question"], store=graph.store, embedder=EMBEDDER, llm=OfflineLLM(), method=method)
        assert out.abstained and out.answer == ABSTENTIONS["en"] and not out.citations, (q["id"], out.answer)
        assert out.offline and out.usage.calls == 0


def test_an_answerable_question_still_gets_its_cited_answer_offline(graph: Graph) -> None:
    out = answer("When was Bob Edwards born?", store=graph.store, embedder=EMBEDDER, llm=OfflineLLM(),
                 method="naive-r")
    assert not out.abstained and out.answer.startswith("1947") and out.unsupported_citations == 0
    assert out.citations[0].chunk_id == graph.chunks["bob"]


def test_a_models_unsupported_citation_is_dropped_and_the_answer_abstains(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("answer", {"answer": "16 [1]", "citations": [1]},
                  {"answer": "The sources do not say.", "citations": []})
    question = "How many biosimilars were approved in 2023?"
    model = make_model()
    out = answer(question, store=graph.store, embedder=EMBEDDER, llm=model, method="naive-r")
    assert out.abstained and out.answer == ABSTENTIONS["en"] and out.unsupported_citations == 1
    said = answer(question, store=graph.store, embedder=EMBEDDER, llm=model, method="naive-r")
    assert said.abstained and said.unsupported_citations == 0 and said.evidence


def test_with_the_entailment_check_on_the_model_is_asked_about_close_calls(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("answer", {"answer": "Bob Edwards left the program for satellite radio [1].", "citations": [1]})
    server.script("citation_support", {"supported": False})
    out = answer("Why did Bob Edwards leave Morning Edition?", store=graph.store, embedder=EMBEDDER,
                 llm=make_model(), method="naive-r", settings=ReasoningSettings(llm_citation_check=True))
    assert out.abstained and out.unsupported_citations >= 1
    assert out.usage.by_task.get("citation_support", 0) >= 1


def test_a_comparison_cites_one_fact_per_source_and_needs_them_together() -> None:
    nolan = "Christopher Nolan is a British-American film director, producer and screenwriter."
    kalathil = "Sathish Kalathil is an Indian film and documentary director and producer in Malayalam."
    question = "Are Christopher Nolan and Sathish Kalathil both film directors?"
    both = hold_to_sources(written(question, "Yes [1][2].", hits(nolan, kalathil)), TokenVerifier())
    assert both.answer == "Yes [1][2]." and both.unsupported_citations == 0 and not both.abstained
    # Each alone holds half of it; one of them with an unrelated chunk does not hold it together.
    alone = hold_to_sources(written(question, "Yes [1][2].", hits(nolan, TURBINES)), TokenVerifier())
    assert alone.abstained and alone.unsupported_citations == 2


def test_a_comparison_citing_one_of_its_two_sources_cites_both() -> None:
    """The 1.5B's reply to the HotpotQA comparison: the right answer, listing only the chunk about one director;
    the two given chunks that hold it together are cited instead, and the one it listed is counted."""
    nolan = "Christopher Nolan is a British-American film director, producer and screenwriter."
    kalathil = "Sathish Kalathil is an Indian film and documentary director and producer in Malayalam."
    question = "Are Christopher Nolan and Sathish Kalathil both film directors?"
    reply = "Yes, Christopher Nolan and Sathish Kalathil are both film directors."
    evidence = hits(TURBINES, kalathil, POLICY, nolan)
    listed = hold_to_sources(written(question, reply, evidence, listed=(2,)), TokenVerifier())
    assert not listed.abstained and [c.marker for c in listed.citations] == [2, 4]
    assert listed.unsupported_citations == 1
    in_text = hold_to_sources(written(question, "Yes [4].", evidence), TokenVerifier())
    assert in_text.answer == "Yes [2][4]." and in_text.unsupported_citations == 1
    # No pair of the given chunks holds it: the answer still abstains.
    alone = hold_to_sources(written(question, reply, hits(nolan, TURBINES), listed=(1,)), TokenVerifier())
    assert alone.abstained and alone.unsupported_citations == 1
    # A question about one thing is not a comparison: two chunks that each hold part of it are not a source.
    vestas = hold_to_sources(written("Did Vestas supply the oil temperature alarm?", "Yes.", hits(TURBINES, POLICY),
                                     listed=(1,)), TokenVerifier())
    assert vestas.abstained
