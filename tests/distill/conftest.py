"""Distillation tests: the real Neo4j, the real OpenAI-compatible client against the scripted server.

:class:`Responder` answers each LLM task from the chunk text in the request, so replies do not depend on
the order of concurrent calls; tests swap its per-task functions to inject bad output.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pymupdf
import pytest

from kg.embeddings import Embedder, HashingEmbedder, l2_normalise
from kg.layers.corpus.ingest import Ingestor
from kg.layers.distilled.text import sentences
from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.settings import LLMSettings
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from kg.testing.scripted_llm import Item, ScriptedLLMServer

EMBEDDER = HashingEmbedder(dimensions=64)
Reply = Callable[[str], Item]


class Responder:
    """Per-task reply functions of the user message's text."""

    def __init__(self) -> None:
        self.tasks: dict[str, Reply] = {}
        self.seen: dict[str, list[str]] = {}

    def __call__(self, body: dict[str, Any]) -> Item:
        task = body.get("response_format", {}).get("json_schema", {}).get("name", "default")
        user = body["messages"][-1]["content"] if body["messages"][-1]["role"] == "user" else ""
        if "could not be used" in user:  # the client's repair round trip: answer from the original
            user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        self.seen.setdefault(task, []).append(user)
        if task not in self.tasks:
            return {"error": f"no reply scripted for {task}"}
        return self.tasks[task](user)


def section(text: str, marker: str) -> str:
    """The part of a prompt after ``marker`` (e.g. "Chunk:")."""
    return text.split(marker, 1)[1].strip() if marker in text else text


@pytest.fixture
def kb(store: GraphStore) -> GraphStore:
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    return store


@pytest.fixture
def responder() -> Responder:
    return Responder()


@pytest.fixture
def llm(responder: Responder) -> Iterator[OpenAICompatibleLLM]:
    with ScriptedLLMServer(default=responder) as server:
        client = OpenAICompatibleLLM(
            LLMSettings(base_url=server.base_url, model="test-model", timeout_s=5.0, max_retries=1),
            cache_dir=None, base_backoff_s=0.01, max_backoff_s=0.02,
        )
        yield client
        client.close()


def load_passages(store: GraphStore, tmp_path: Path, passages: dict[str, str], name: str = "corpus") -> list[str]:
    """Load ``{title: text}`` as one document per passage; returns their document ids in order."""
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps([{"title": t, "text": x} for t, x in passages.items()]), "utf-8")
    Ingestor(store, EMBEDDER, batch_size=200).load([path])
    rows = store.query("MATCH (d:Document) WHERE d.source STARTS WITH $p RETURN d.id AS id, d.title AS title",
                       p=str(path.resolve()))
    by_title = {r["title"]: r["id"] for r in rows}
    return [by_title[t] for t in passages]


def load_pdf(store: GraphStore, path: Path, title: str, pages: list[tuple[str, list[str]]]) -> str:
    """Write and load a PDF with one heading and its lines per page; returns its document id."""
    doc = pymupdf.open()
    for heading, lines in pages:
        page = doc.new_page(width=595, height=842)
        page.insert_text((72, 100), heading, fontsize=20, fontname="hebo")
        for i, line in enumerate(lines):
            page.insert_text((72, 140 + 20 * i), line, fontsize=11)
    doc.set_toc([[1, heading, n] for n, (heading, _) in enumerate(pages, start=1)])
    doc.set_metadata({"title": title})
    doc.save(path)
    Ingestor(store, EMBEDDER, batch_size=200).load([path])
    return str(store.query("MATCH (d:Document {title: $t}) RETURN d.id AS id", t=title)[0]["id"])


def at_cosine(cosine: float, axis: int = 1) -> npt.NDArray[np.float32]:
    """A unit vector whose cosine to the first axis is ``cosine`` (the rest on ``axis``)."""
    vector = np.zeros(EMBEDDER.dimensions, dtype=np.float32)
    vector[0], vector[axis] = cosine, np.sqrt(max(0.0, 1.0 - cosine * cosine))
    return vector


class MarkerEmbedder(Embedder):
    """The test embedder, except that a text containing one of ``markers`` gets that marker's vector: crafted
    similarities through the real pipeline."""

    def __init__(self, markers: dict[str, npt.ArrayLike]) -> None:
        self.markers = {m: l2_normalise(v)[0] for m, v in markers.items()}
        self.name, self.dimensions = EMBEDDER.name, EMBEDDER.dimensions

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = EMBEDDER.embed(texts).copy()
        for i, text in enumerate(texts):
            hit = next((m for m in self.markers if m in text), None)
            if hit is not None:
                out[i] = self.markers[hit]
        return out


def questions_from(text: str) -> Item:
    """Atomic questions: one per sentence, plus a duplicate to exercise de-duplication."""
    chunk = section(text, "Chunk:")
    sents = sentences(chunk)
    questions = [f"What does the text state about {s.split()[0] if ' ' in s else s[:4]} ({n})?"
                 for n, s in enumerate(sents)]
    return {"questions": [*questions, questions[0]]}


def script_shared_call(responder: Responder, triples: Callable[[str], dict[str, Any]],
                       tags: Callable[[str], dict[str, list[str]]] | None = None) -> None:
    """Script the shared call of atoms, triples and tags (``atoms_triples``, ``chunk_knowledge``) from the
    separate tasks' replies: ``questions_from``, ``triples`` (given the chunk as its ``Text:`` prompt shows it)
    and ``tags`` (given the chunk; no tags by default)."""

    def atoms_triples(text: str) -> dict[str, Any]:
        chunk = section(text, "Chunk:")
        questions = questions_from(text)
        assert isinstance(questions, dict)
        return {**questions, "triples": triples(f"Text:\n{chunk}")["triples"]}

    responder.tasks["atoms_triples"] = atoms_triples
    responder.tasks["chunk_knowledge"] = lambda text: {
        **atoms_triples(text), "tags": tags(section(text, "Chunk:")) if tags is not None else {}}
