"""A small real graph for the reasoning tests: markdown files loaded by the real ingestor into the real
Neo4j, with atoms (and, where a test needs them, entities and rows) written by plain Cypher here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from neo4j import RoutingControl

from kg.embeddings import HashingEmbedder
from kg.layers.corpus.ingest import Ingestor
from kg.llm import LLM, make_llm
from kg.settings import LLMSettings
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from kg.testing import ScriptedLLMServer

EMBEDDER = HashingEmbedder(dimensions=64)

DOCS = {
    "renee": ("Renée Montagne", "Renée Montagne is an American radio journalist. She co-hosted the program "
              "Morning Edition from 2004 to 2016. Montagne and Inskeep succeeded longtime host Bob Edwards."),
    "bob": ("Bob Edwards", "Bob Edwards is an American broadcast journalist born in 1947. He was the first host "
            "of Morning Edition on National Public Radio."),
    "inskeep": ("Steve Inskeep", "Steve Inskeep is a journalist. He hosts Morning Edition with other hosts."),
    "approvals": ("Biosimilar approvals", "In 2019, 10 biosimilars were approved. In 2020, 12 biosimilars were "
                  "approved. In 2021, 14 biosimilars were approved. In 2022, 16 biosimilars were approved."),
}
ATOMS = {
    "renee": ["Who succeeded Bob Edwards as host of Morning Edition?",
              "When did Renée Montagne co-host Morning Edition?"],
    "bob": ["Which program did Bob Edwards host first?", "When was Bob Edwards born?"],
    "inskeep": ["Who hosts Morning Edition with Steve Inskeep?"],
    "approvals": ["How many biosimilars were approved in 2021?"],
}

_WRITE_ATOMS = """
UNWIND $rows AS r
MATCH (c:Chunk {id: r.chunk_id})
MERGE (a:Atom {id: r.id})
SET a.text = r.text, a.kind = 'question', a.source = 'llm', a.document_id = c.document_id,
    a.chunk_id = c.id, a.embedding = r.embedding
MERGE (a)-[:ATOM_OF]->(c)
"""
_CHUNKS = "MATCH (c:Chunk) RETURN c.title AS title, c.id AS id, c.text AS text"


@dataclass
class Graph:
    store: GraphStore
    chunks: dict[str, str]  # key -> chunk id
    texts: dict[str, str]  # key -> chunk text


@pytest.fixture
def graph(store: GraphStore, tmp_path: Path) -> Graph:
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    for key, (title, text) in DOCS.items():
        (tmp_path / f"{key}.md").write_text(f"# {title}\n\n{text}\n", "utf-8")
    report = Ingestor(store, EMBEDDER, chunk_tokens=200).load([tmp_path])
    assert report.failed == 0
    by_title = {r["title"]: (r["id"], r["text"]) for r in store.query(_CHUNKS)}
    chunks = {key: by_title[title][0] for key, (title, _) in DOCS.items()}
    texts = {key: by_title[title][1] for key, (title, _) in DOCS.items()}
    rows = [
        {"id": f"{chunks[key]}:a{i}", "chunk_id": chunks[key], "text": text,
         "embedding": EMBEDDER.embed_one(text).tolist()}
        for key, questions in ATOMS.items() for i, text in enumerate(questions)
    ]
    store.query(_WRITE_ATOMS, rows=rows, routing=RoutingControl.WRITE)
    store.write("meta/await_indexes", timeout_s=60)
    return Graph(store, chunks, texts)


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as srv:
        yield srv


@pytest.fixture
def make_model(server: ScriptedLLMServer) -> Iterator[Callable[..., LLM]]:
    made: list[LLM] = []

    def make(**settings: object) -> LLM:
        fields: dict[str, object] = {"base_url": server.base_url, "model": "scripted-model", "timeout_s": 10.0,
                                     "max_retries": 1}
        fields.update(settings)
        llm = make_llm(LLMSettings.model_validate(fields), cache_dir=None, base_backoff_s=0.01, max_backoff_s=0.02)
        made.append(llm)
        return llm

    yield make
    for llm in made:
        llm.close()
