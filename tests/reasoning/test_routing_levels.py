"""Routing by question class, the quantitative (Row nodes), predictive (L3) and creative (L4) answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kg.layers.corpus.ingest import Ingestor
from kg.layers.distilled import distill
from kg.llm import LLM, OfflineLLM
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from kg.testing import ScriptedLLMServer
from reasoning import ReasoningSettings, answer
from reasoning.bindings import default_ports
from reasoning.core import Run
from reasoning.levels import fit_trend, question_op, yearly_series
from reasoning.router import SUBTYPES, classify, heuristic_class
from tests.reasoning.conftest import ATOMS, EMBEDDER, Graph

TABLE_DOCS = {
    "failures.md": "# Failure report 2024\n\nFailures per site in 2024.\n\n"
                   "| site | failures | repairs |\n|---|---|---|\n| North Hill | 4 | 2 |\n| South Bay | 9 | 7 |\n"
                   "| West End | 1 | 1 |\n",
    "fleet.md": "# Fleet\n\nThe sites and their machines.\n\n| site | model |\n|---|---|\n"
                "| North Hill | Alpha 2 |\n| South Bay | Beta 7 |\n| West End | Alpha 2 |\n",
    "managers.md": "# Site managers\n\nThe manager of South Bay is Ada Quist. North Hill is run by Bo Lind.\n",
    "history.md": "# Approval history\n\nApprovals per year.\n\n| year | approvals |\n|---|---|\n"
                  "| 2019 | 10 |\n| 2020 | 12 |\n| 2021 | 14 |\n| 2022 | 16 |\n",
}


@pytest.fixture
def tables(graph: Graph, tmp_path: Path) -> Graph:
    """The reasoning graph plus three Markdown tables, loaded by the real ingestor and distilled into Row
    nodes by the real tables layer."""
    folder = tmp_path / "tables"
    folder.mkdir()
    for name, text in TABLE_DOCS.items():
        (folder / name).write_text(text, "utf-8")
    report = Ingestor(graph.store, EMBEDDER, chunk_tokens=200).load([folder])
    assert report.failed == 0
    distill(graph.store, EMBEDDER, OfflineLLM(), layers=["tables"])
    return graph


@pytest.mark.parametrize(("question", "expected"), [
    ("Who founded Neo4j?", ("factual", "")),
    ("How many biosimilars were approved in total?", ("linkable", "quantitative")),
    ("Which is older, the Eiffel Tower or the Statue of Liberty?", ("linkable", "comparative")),
    ("Bob Edwards was the host of what show, that later was hosted by Renee Montagne?", ("linkable", "bridging")),
    ("Summarize the main themes of the handbook", ("linkable", "summarising")),
    ("How many biosimilars will be approved in 2026?", ("predictive", "")),
    ("How many gearbox failures should Borealis Wind expect in 2025?", ("predictive", "")),
    ("Which turbine model runs at the site that recorded the most gearbox failures in 2024?",
     ("linkable", "bridging")),
    ("Which site had the most failures?", ("linkable", "quantitative")),
    ("Who did Will Smith marry?", ("factual", "")),
    ("Suggest ideas to shorten the approval process", ("creative", "")),
])
def test_heuristic_classifier(question: str, expected: tuple[str, str]) -> None:
    assert heuristic_class(question) == expected


def test_llm_subtypes_become_the_linkable_subtypes_the_prompt_offers(
        store: GraphStore, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    settings = ReasoningSettings()
    llm = make_model()
    run = Run(question="Who hosted the show that Bob Edwards started?", store=store, llm=llm, settings=settings,
              ports=default_ports(store, EMBEDDER, None, settings))
    for label, said, expected in [("linkable", "Comparison", "comparative"), ("linkable", "bridging", "bridging"),
                                  ("linkable", "multi-hop", "bridging"), ("linkable", "summarization", "summarising"),
                                  ("linkable", "aggregation", "quantitative"), ("linkable", "temporal", ""),
                                  ("factual", "bridging", "")]:
        server.script("question_class", {"label": label, "subtype": said})
        assert classify(run) == (label, expected, "llm"), said
    prompt = str(server.chat_requests("question_class")[0].body["messages"])
    assert all(name in prompt for name in SUBTYPES) and set(SUBTYPES) == {
        "bridging", "comparative", "quantitative", "summarising"}


def test_question_op() -> None:
    assert question_op("What is the average rating?") == "avg"
    assert question_op("How many approvals were there?") == "count"
    assert question_op("What is the total of approvals?") == "sum"
    assert question_op("Who hosted the show?") is None


def test_auto_routes_linkable_questions_to_decomposition(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_class", {"label": "linkable", "subtype": "bridging"})
    server.script("question_proposals", {"proposals": [ATOMS["renee"][0]], "sufficient": False},
                  {"proposals": [], "sufficient": True})
    server.script("atom_selection", {"index": 0, "reason": "r"})
    server.script("answer", {"answer": "Morning Edition [1]", "citations": [1]})
    # seed_k=0: the paper's empty C0, so the scripted proposal's chunk is new (this tiny graph's top 4 hold it).
    out = answer("Bob Edwards hosted what show later hosted by Renee Montagne?", store=graph.store,
                 embedder=EMBEDDER, llm=make_model(), settings=ReasoningSettings(seed_k=0))
    assert out.method == "auto:decompose" and out.question_class == "linkable" and out.subtype == "bridging"
    assert out.decomposition is not None and out.decomposition.stop_reason == "sufficient"
    route = next(s for s in out.trace if s.kind == "route")
    assert route.detail == {"question_class": "linkable", "subtype": "bridging", "classified_by": "llm",
                            "method": "decompose"}


def test_auto_routes_factual_questions_to_hybrid_retrieval(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_class", {"label": "factual"})
    server.script("answer", {"answer": "1947 [1]", "citations": [1]})
    out = answer("When was Bob Edwards born?", store=graph.store, embedder=EMBEDDER, llm=make_model())
    assert out.method == "auto:hybrid" and out.citations[0].chunk_id == out.evidence[0].chunk_id
    paths = {s.path for h in out.evidence for s in h.sources}  # strata: dense and Lucene fused, plus links
    assert "chunk" in paths and paths & {"fulltext", "fulltext_atom"}
    assert graph.chunks["bob"] in {h.chunk_id for h in out.evidence}


def test_quantitative_answers_name_the_row_and_the_total(tables: Graph) -> None:
    out = answer("How many failures were recorded across all sites in 2024, and which site had the most?",
                 store=tables.store, embedder=EMBEDDER, llm=OfflineLLM())
    assert out.method == "auto:quantitative" and out.aggregation is not None
    agg = out.aggregation
    assert (agg.op, agg.column, agg.value, agg.rows, agg.label) == ("sum", "failures", 14.0, 3, "South Bay")
    assert "14 failures in total across all 3 sites" in out.answer and "South Bay had the most failures: 9" \
        in out.answer
    assert out.citations[0].title == "Failure report 2024"
    fewest = answer("Which site had the fewest repairs?", store=tables.store, embedder=EMBEDDER, llm=OfflineLLM())
    assert fewest.aggregation is not None and fewest.aggregation.label == "West End"
    one = answer("How many failures did South Bay record?", store=tables.store, embedder=EMBEDDER, llm=OfflineLLM())
    assert one.aggregation is not None and one.aggregation.value == 9.0 and one.aggregation.where == "site=South Bay"
    avg = answer("What is the average of approvals?", store=tables.store, embedder=EMBEDDER, llm=OfflineLLM())
    assert avg.aggregation is not None and avg.aggregation.value == pytest.approx(13.0)


def test_how_many_counts_rows_when_the_counted_noun_names_them(tables: Graph) -> None:
    out = answer("How many sites are in the failure report?", store=tables.store, embedder=EMBEDDER,
                 llm=OfflineLLM())
    assert out.method == "auto:quantitative" and out.aggregation is not None
    assert (out.aggregation.op, out.aggregation.column, out.aggregation.value) == ("count", "site", 3.0)
    assert out.answer.startswith("3 sites")


def test_predictive_from_dated_sentences_forecasts_their_count_and_says_so(store: GraphStore,
                                                                          tmp_path: Path) -> None:
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    (tmp_path / "lab.md").write_text("# Harbour lab\n\nThe harbour lab opened in 2019. Divers surveyed the reef "
                                     "in 2020. The lab was renamed in 2020. A storm closed it in 2021.\n", "utf-8")
    assert Ingestor(store, EMBEDDER, chunk_tokens=200).load([tmp_path]).failed == 0
    store.write("meta/await_indexes", timeout_s=60)
    out = answer("How many reef surveys will the harbour lab run in 2023?", store=store, embedder=EMBEDDER,
                 llm=OfflineLLM())
    fc = out.forecast
    assert out.method == "auto:predictive" and fc is not None
    assert fc.series == [(2019, 1.0), (2020, 2.0), (2021, 1.0)] and fc.target_year == 2023
    assert fc.measure == "number of evidence sentences dated each year"
    assert out.answer.startswith("Forecast of the number of evidence sentences dated each year, not of the "
                                 "quantity asked")


def test_bridging_around_a_superlative_ranks_then_bridges(tables: Graph) -> None:
    question = "Which model runs at the site that recorded the most failures?"
    assert heuristic_class(question) == ("linkable", "bridging")
    out = answer(question, store=tables.store, embedder=EMBEDDER, llm=OfflineLLM())
    assert out.method == "auto:bridge" and out.answer.startswith("Beta 7 [1]")
    assert out.aggregation is not None and out.aggregation.label == "South Bay"
    assert [c.title for c in out.citations] == ["Fleet", "Failure report 2024"]


def test_bridging_without_a_second_table_answers_the_rewritten_question_from_retrieval(tables: Graph) -> None:
    out = answer("Who is the manager of the site that recorded the most failures?", store=tables.store,
                 embedder=EMBEDDER, llm=OfflineLLM())
    assert out.method == "auto:bridge" and out.offline and out.answer.startswith("Ada Quist [")
    assert "Who is the manager of South Bay?" in out.answer and out.supporting_sentence is not None
    assert out.citations[0].title == "Failure report 2024" and "Site managers" in {c.title for c in out.citations}


def test_predictive_structures_the_series_from_table_rows(tables: Graph) -> None:
    out = answer("How many approvals should we expect in 2024?", store=tables.store, embedder=EMBEDDER,
                 llm=OfflineLLM())
    assert out.method == "auto:predictive" and out.forecast is not None
    assert out.forecast.series == [(2019, 10.0), (2020, 12.0), (2021, 14.0), (2022, 16.0)]
    assert out.forecast.predicted == pytest.approx(20.0) and out.citations[0].title == "Approval history"
    assert "2019: 10, 2020: 12" in out.answer


def test_yearly_series_and_least_squares() -> None:
    from kg.retrieval.base import Hit

    ev = [Hit(chunk_id="c", text="In 2019, 10 were approved. In 2021, 14 were approved. Unrelated 5.",
              document_id="d", title="t", char_start=0, char_end=10, score=1.0)]
    series, kind, used = yearly_series(ev)
    assert series == [(2019, 10.0), (2021, 14.0)] and kind == "values" and used == [1]
    slope, intercept = fit_trend([(2019, 10.0), (2020, 12.0), (2021, 14.0)])
    assert slope == pytest.approx(2.0) and slope * 2022 + intercept == pytest.approx(16.0)
    counts, kind, _ = yearly_series([ev[0].model_copy(update={"text": "Approved in 2019. Also 2019 again. 2020 too."})])
    assert kind == "counts" and counts == [(2019, 2.0), (2020, 1.0)]


def test_predictive_offline_forecast_is_transparent(graph: Graph) -> None:
    out = answer("How many biosimilars will be approved in 2024?", store=graph.store, embedder=EMBEDDER,
                 llm=OfflineLLM())
    assert out.method == "auto:predictive" and out.question_class == "predictive" and out.offline
    fc = out.forecast
    assert fc is not None and fc.series == [(2019, 10.0), (2020, 12.0), (2021, 14.0), (2022, 16.0)]
    assert fc.slope == pytest.approx(2.0) and fc.target_year == 2024 and fc.predicted == pytest.approx(20.0)
    assert fc.explanation_source == "offline template" and "offline template explanation" in out.answer
    assert "20.00" in out.answer and out.citations[0].chunk_id == graph.chunks["approvals"]


def test_predictive_with_llm_explains_the_forecast(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_class", {"label": "predictive"})
    server.script("forecast_explanation", {"forecast": "About 20 approvals [1].", "drivers": ["steady +2/yr [1]"],
                                           "confidence": 0.6})
    out = answer("How many biosimilars will be approved in 2024?", store=graph.store, embedder=EMBEDDER,
                 llm=make_model())
    assert out.forecast is not None and out.forecast.explanation_source == "llm"
    prompt = str(server.chat_requests("forecast_explanation")[0].body["messages"][-1]["content"])
    assert "2019: 10" in prompt and "forecast for 2024: 20.00" in prompt


def test_creative_runs_perspectives_then_a_synthesis_citing_only_what_they_cite(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_class", {"label": "creative"})
    server.script("perspective", {"viewpoint": "v", "argument": "Use reruns [1] and guests [9].", "citations": [1]})
    # [2] is evidence the perspective agents saw but none cited: the synthesis never saw it, so it cannot cite it.
    server.script("synthesis", {"answer": "Combine reruns and guests [1, 2]【5】.", "citations": [1, 2]})
    out = answer("Suggest ideas to renew Morning Edition", store=graph.store, embedder=EMBEDDER, llm=make_model())
    assert out.method == "auto:creative" and len(out.perspectives) == 3 and len(out.evidence) >= 2
    assert len(server.chat_requests("perspective")) == 3
    assert all("[9]" not in p.argument and p.citations == [1] for p in out.perspectives)
    assert out.answer == "Combine reruns and guests [1]." and out.dropped_markers == [2, 5]
    assert [c.marker for c in out.citations] == [1] and out.citations[0].text == out.evidence[0].text
    synthesis_prompt = str(server.chat_requests("synthesis")[0].body["messages"][-1]["content"])
    assert synthesis_prompt.count("Perspective ") == 3 and "cites [1]" in synthesis_prompt
    assert out.evidence[0].text in synthesis_prompt and out.evidence[1].text not in synthesis_prompt


def test_creative_offline_says_an_llm_is_needed(graph: Graph) -> None:
    out = answer("Suggest ideas to renew Morning Edition", store=graph.store, embedder=EMBEDDER, llm=OfflineLLM())
    assert out.offline and "creative answers need an LLM" in out.answer and out.evidence and not out.citations
    assert out.supporting_sentence is None


def test_a_year_beyond_every_year_of_the_evidence_makes_a_question_predictive(graph: Graph) -> None:
    beyond = answer("How many biosimilars were approved in 2030?", store=graph.store, embedder=EMBEDDER,
                    llm=OfflineLLM())
    assert beyond.method == "auto:predictive" and beyond.forecast is not None
    assert beyond.forecast.target_year == 2030
    within = answer("How many biosimilars were approved in 2021?", store=graph.store, embedder=EMBEDDER,
                    llm=OfflineLLM())
    assert within.method != "auto:predictive"
