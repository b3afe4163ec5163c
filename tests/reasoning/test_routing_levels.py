"""Routing by question class, the quantitative (Row nodes), predictive (L3) and creative (L4) answers."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from neo4j import RoutingControl

from kg.llm import LLM, OfflineLLM
from kg.testing import ScriptedLLMServer
from reasoning import answer
from reasoning.levels import fit_trend, question_op, yearly_series
from reasoning.router import heuristic_class
from tests.reasoning.conftest import ATOMS, EMBEDDER, Graph

_ROWS = """
MATCH (c:Chunk {id: $chunk_id})
MERGE (t:Table {id: 'tbl1'}) SET t.document_id = c.document_id, t.header = ['product', 'approvals']
MERGE (c)-[:REPRESENTS]->(t)
WITH t, c
UNWIND $rows AS r
MERGE (row:Row {id: r.id}) SET row.document_id = c.document_id, row.table_id = 'tbl1', row.cells = r.cells
MERGE (row)-[:ROW_OF]->(t)
MERGE (c)-[:HAS_ROW]->(row)
"""


@pytest.mark.parametrize(("question", "expected"), [
    ("Who founded Neo4j?", ("factual", "")),
    ("How many biosimilars were approved in total?", ("linkable", "quantitative")),
    ("Which is older, the Eiffel Tower or the Statue of Liberty?", ("linkable", "comparative")),
    ("Bob Edwards was the host of what show, that later was hosted by Renee Montagne?", ("linkable", "bridging")),
    ("Summarize the main themes of the handbook", ("linkable", "summarising")),
    ("How many biosimilars will be approved in 2026?", ("predictive", "")),
    ("Suggest ideas to shorten the approval process", ("creative", "")),
])
def test_heuristic_classifier(question: str, expected: tuple[str, str]) -> None:
    assert heuristic_class(question) == expected


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
    out = answer("Bob Edwards hosted what show later hosted by Renee Montagne?", store=graph.store,
                 embedder=EMBEDDER, llm=make_model())
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
    assert {s.path for h in out.evidence for s in h.sources} <= {"chunk", "fulltext"}
    assert graph.chunks["bob"] in {h.chunk_id for h in out.evidence}


def test_quantitative_questions_aggregate_row_nodes_in_cypher(graph: Graph) -> None:
    rows = [{"id": f"r{i}", "cells": [f"product=p{i}", f"approvals={n}"]} for i, n in enumerate([3, 5, 10])]
    graph.store.query(_ROWS, chunk_id=graph.chunks["approvals"], rows=rows, routing=RoutingControl.WRITE)
    out = answer("What is the total number of approvals?", store=graph.store, embedder=EMBEDDER, llm=OfflineLLM())
    assert out.method == "auto:quantitative" and out.aggregation is not None
    assert out.aggregation.op == "sum" and out.aggregation.value == 18.0 and out.aggregation.rows == 3
    assert out.aggregation.column == "approvals" and out.citations[0].chunk_id == graph.chunks["approvals"]
    avg = answer("What is the average of approvals?", store=graph.store, embedder=EMBEDDER, llm=OfflineLLM())
    assert avg.aggregation is not None and avg.aggregation.value == pytest.approx(6.0)


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


def test_creative_runs_perspectives_then_a_cited_synthesis(
        graph: Graph, server: ScriptedLLMServer, make_model: Callable[..., LLM]) -> None:
    server.script("question_class", {"label": "creative"})
    server.script("perspective", {"viewpoint": "v", "argument": "Use reruns [1] and guests [9].", "citations": [1]})
    server.script("synthesis", {"answer": "Combine reruns and guests [1][5].", "citations": [1]})
    out = answer("Suggest ideas to renew Morning Edition", store=graph.store, embedder=EMBEDDER, llm=make_model())
    assert out.method == "auto:creative" and len(out.perspectives) == 3
    assert len(server.chat_requests("perspective")) == 3
    assert all("[9]" not in p.argument and p.citations == [1] for p in out.perspectives)
    assert out.dropped_markers == [5] and [c.marker for c in out.citations] == [1]
    synthesis_prompt = str(server.chat_requests("synthesis")[0].body["messages"][-1]["content"])
    assert synthesis_prompt.count("Perspective ") == 3


def test_creative_offline_says_an_llm_is_needed(graph: Graph) -> None:
    out = answer("Suggest ideas to renew Morning Edition", store=graph.store, embedder=EMBEDDER, llm=OfflineLLM())
    assert out.offline and "creative answers need an LLM" in out.answer and out.evidence and not out.citations
