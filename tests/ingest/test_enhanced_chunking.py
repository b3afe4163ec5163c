"""Enhanced chunking (PIKE-RAG 5.2.1) through the real client over HTTP, into the real Neo4j."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from kg.embeddings import HashingEmbedder
from kg.errors import BudgetExceededError
from kg.layers.corpus.ingest import Ingestor
from kg.llm import OpenAICompatibleLLM
from kg.settings import LLMSettings
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from kg.testing import ScriptedLLMServer
from loaders import load_path

EMBEDDER = HashingEmbedder(dimensions=32)
SMALL = 16  # chunk tokens: this text's five sentences make several chunks (no chunk is cut under 8 tokens)
TEXT = (
    "# Gearboxes\n\nThe NW-3 gearbox was redesigned in 2021. It now has a larger oil cooler. "
    "Its failure rate dropped by half. Technicians inspect it every six months. They log oil samples.\n"
)


def two_sentence_chunks(body: dict[str, Any]) -> dict[str, Any]:
    """Take two sentences per chunk; the summary names the last sentence it saw."""
    window = body["messages"][-1]["content"].split("Window:")[-1]
    numbered = re.findall(r"^\d+\. (.*)$", window, flags=re.MULTILINE)
    return {"sentences": 2, "summary": f"So far up to: {numbered[min(1, len(numbered) - 1)][:30]}"}


def llm_for(server: ScriptedLLMServer, tmp_path: Path, **kwargs: Any) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        LLMSettings(base_url=server.base_url, model="m", timeout_s=5, max_retries=1),
        cache_dir=tmp_path / "cache", **kwargs,
    )


def test_recurrent_split_keeps_exact_spans_and_stores_summaries(tmp_path: Path, store: GraphStore) -> None:
    path = tmp_path / "gearbox.md"
    path.write_text(TEXT, "utf-8")
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    with ScriptedLLMServer() as server:
        server.set_default(two_sentence_chunks)
        with llm_for(server, tmp_path) as llm:
            report = Ingestor(store, EMBEDDER, llm=llm, chunk_tokens=SMALL).load([path])
        calls = len(server.chat_requests("enhanced_chunk"))
    assert report.chunking == "enhanced (LLM)"
    assert report.llm is not None and report.llm.calls == calls == 3  # 5 sentences, 2 per chunk
    source = next(load_path(path))
    rows = store.query("MATCH (c:Chunk) RETURN c.text AS text, c.char_start AS a, c.char_end AS b, "
                       "c.summary AS summary ORDER BY c.order")
    assert [r["text"] for r in rows] == [source.text[r["a"]:r["b"]] for r in rows]
    assert rows[0]["text"].startswith("The NW-3 gearbox") and rows[0]["text"].endswith("oil cooler.")
    assert rows[0]["summary"] == "So far up to: It now has a larger oil cooler"  # [:30] of sentence 2
    assert all(r["summary"] for r in rows)


def test_reloading_an_unchanged_file_makes_no_llm_call(tmp_path: Path, store: GraphStore) -> None:
    path = tmp_path / "gearbox.md"
    path.write_text(TEXT, "utf-8")
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    with ScriptedLLMServer() as server:
        server.set_default(two_sentence_chunks)
        with llm_for(server, tmp_path) as llm:
            first = Ingestor(store, EMBEDDER, llm=llm, chunk_tokens=SMALL).load([path])
        assert first.files[0].status == "loaded" and len(server.chat_requests("enhanced_chunk")) == 3
        # A fresh client over the same response cache: a cache hit would count, so would a request.
        with llm_for(server, tmp_path) as llm:
            again = Ingestor(store, EMBEDDER, llm=llm, chunk_tokens=SMALL).load([path])
        assert len(server.chat_requests("enhanced_chunk")) == 3
    assert again.files[0].status == "unchanged"
    assert again.llm is not None and (again.llm.calls, again.llm.cache_hits) == (0, 0)
    assert store.query("MATCH (c:Chunk) WHERE c.summary IS NOT NULL RETURN count(c) AS n")[0]["n"] == 3


def test_offline_load_says_structural(tmp_path: Path, store: GraphStore) -> None:
    path = tmp_path / "gearbox.md"
    path.write_text(TEXT, "utf-8")
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    report = Ingestor(store, EMBEDDER).load([path])
    assert report.chunking == "structural (offline: no LLM configured)"
    assert report.llm is None


def test_budget_stops_the_load_cleanly(tmp_path: Path, store: GraphStore) -> None:
    path = tmp_path / "gearbox.md"
    path.write_text("".join(TEXT.replace("NW-3", f"NW-{n}") for n in range(20)), "utf-8")
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    with ScriptedLLMServer() as server:
        server.set_default(two_sentence_chunks)
        with llm_for(server, tmp_path, budget_tokens=3000) as llm, pytest.raises(BudgetExceededError):
            Ingestor(store, EMBEDDER, llm=llm, chunk_tokens=SMALL).load([path])
    # Nothing of the interrupted document was written.
    assert store.query("MATCH (n:Chunk) RETURN count(n) AS n")[0]["n"] == 0


def test_a_model_that_cuts_one_sentence_at_a_time_still_makes_chunks_of_half_the_chunk_size(
        tmp_path: Path, store: GraphStore) -> None:
    path = tmp_path / "gearbox.md"
    path.write_text(TEXT, "utf-8")
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    with ScriptedLLMServer() as server:
        server.set_default(lambda _body: {"sentences": 1, "summary": "Gearbox notes."})
        with llm_for(server, tmp_path) as llm:
            Ingestor(store, EMBEDDER, llm=llm, chunk_tokens=40).load([path])
        calls = len(server.chat_requests("enhanced_chunk"))
    rows = store.query("MATCH (c:Chunk) RETURN c.tokens AS tokens ORDER BY c.order")
    assert len(rows) == calls < 5  # five sentences, fewer chunks and calls
    assert all(r["tokens"] >= 20 for r in rows[:-1]), rows  # only the section's last chunk may be shorter
