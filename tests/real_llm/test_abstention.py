"""The citation check with a real model: qwen2.5-coder-0.5b answers the unanswerable questions of
``tests/reasoning/unanswerable.json`` over both corpora they were written for (the reasoning tests' documents
and the demo corpus, loaded and distilled offline here: only the answers are the model's). Whatever the model
writes, what reaches the user either abstains or cites only chunks that support the sentences citing them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg.app.demo import CORPUS
from kg.llm import LLM, make_llm
from kg.settings import LLMSettings
from kg.store.base import GraphStore
from reasoning import ReasoningSettings, answer
from reasoning.citations import TokenVerifier, abstention, hold_to_sources
from tests.conftest import TestServer
from tests.real_llm.conftest import EMBEDDER, offline_kb

pytestmark = [pytest.mark.real_llm, pytest.mark.neo4j, pytest.mark.slow, pytest.mark.timeout(3600)]

UNANSWERABLE = json.loads((Path(__file__).parents[1] / "reasoning" / "unanswerable.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def corpora(session_store: GraphStore, neo4j_server: TestServer,
            tmp_path_factory: pytest.TempPathFactory) -> GraphStore:
    offline_kb(session_store, neo4j_server, tmp_path_factory.mktemp("abstention"), also=[CORPUS])
    return session_store


@pytest.fixture(scope="module")
def model(real_llm_settings: LLMSettings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LLM]:
    with make_llm(real_llm_settings, cache_dir=tmp_path_factory.mktemp("abstention-cache")) as llm:
        yield llm


@pytest.mark.parametrize("method", ["naive-r", "decompose"])
@pytest.mark.parametrize("question", UNANSWERABLE["questions"], ids=lambda q: q["id"])
def test_the_real_model_abstains_or_cites_only_supporting_chunks_on_an_unanswerable_question(
        corpora: GraphStore, model: LLM, method: str, question: dict[str, str]) -> None:
    # Four chunks of context and two steps: a 2-core machine answers in minutes, not in a quarter of an hour.
    started = time.perf_counter()
    out = answer(question["question"], store=corpora, embedder=EMBEDDER, llm=model, method=method,
                 settings=ReasoningSettings(flat_k=4, hybrid_k=4, max_steps=2))
    print(f"\n{method} {question['id']}: " + json.dumps(
        {"abstained": out.abstained, "unsupported_citations": out.unsupported_citations, "answer": out.answer,
         "cited": [c.title for c in out.citations], "calls": out.usage.calls,
         "seconds": round(time.perf_counter() - started)}, ensure_ascii=False))
    assert not out.offline and out.usage.calls > 0
    if out.abstained:
        assert not out.citations and out.answer == abstention(question["question"])
    else:
        # What the user is shown holds: checked again, no citation of it is dropped.
        assert out.citations and hold_to_sources(out, TokenVerifier()) == out, (question["id"], out.answer)
