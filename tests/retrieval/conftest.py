"""A small corpus in the real Neo4j, with distilled nodes written by hand following the shared conventions:
(:Atom)-[:ATOM_OF]->(:Chunk); (:Chunk)-[:MENTIONS]->(:Entity); (:Fact)-[:FACT_OF]->(:Chunk),
(:Fact)-[:SUBJECT|OBJECT]->(:Entity); (:Topic)-[:HAS_ROUTE]->(:Route)-[:HAS_ITEM]->(:FactItem)-[:ITEM_OF]->(:Chunk).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from neo4j import RoutingControl

from kg.app.evaluation.runner import corpus_documents, load_corpus
from kg.embeddings import HashingEmbedder
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from loaders import split_sentences

EMBEDDER = HashingEmbedder(dimensions=64)

PASSAGES = {
    "Arthur's Magazine": "Arthur's Magazine was an American literary periodical published in Philadelphia. "
                         "It was edited by Timothy Shay Arthur.",
    "First for Women": "First for Women is a woman's magazine published by Bauer Media Group in the USA. "
                       "The magazine was started in 1989.",
    "Timothy Shay Arthur": "Timothy Shay Arthur was a popular American writer. He was born in Newburgh.",
    "Newburgh": "Newburgh is a city in Orange County. It lies on the Hudson River.",
    "Bauer Media Group": "Bauer Media Group is a German media company based in Hamburg.",
    "Hamburg": "Hamburg is a port city in northern Germany on the Elbe river.",
}
# (head, relation, tail, passage the fact comes from)
FACTS = [
    ("Arthur's Magazine", "edited by", "Timothy Shay Arthur", "Arthur's Magazine"),
    ("Timothy Shay Arthur", "born in", "Newburgh", "Timothy Shay Arthur"),
    ("Newburgh", "lies on", "Hudson River", "Newburgh"),
    ("First for Women", "published by", "Bauer Media Group", "First for Women"),
    ("Bauer Media Group", "based in", "Hamburg", "Bauer Media Group"),
    ("Hamburg", "on", "Elbe", "Hamburg"),
]
WRITE = RoutingControl.WRITE


@dataclass
class Corpus:
    store: GraphStore
    chunks: dict[str, str]  # title -> chunk id
    documents: dict[str, str]  # title -> document id


def load_passages(store: GraphStore, tmp_path: Path, passages: dict[str, str]) -> Corpus:
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps([{"title": t, "text": x} for t, x in passages.items()]), "utf-8")
    load_corpus(store, EMBEDDER, corpus_documents(path, path))
    rows = store.query("MATCH (c:Chunk) RETURN c.title AS title, c.id AS id, c.document_id AS doc")
    return Corpus(store, {r["title"]: r["id"] for r in rows}, {r["title"]: r["doc"] for r in rows})


def _vec(text: str) -> list[float]:
    return [float(x) for x in EMBEDDER.embed_one(text)]


def add_atoms(corpus: Corpus) -> None:
    """Offline-style atoms: one statement per sentence of each chunk."""
    rows = []
    for title, chunk_id in corpus.chunks.items():
        text = PASSAGES[title]
        for n, (a, b) in enumerate(split_sentences(text)):
            rows.append({"id": f"{chunk_id}:a{n}", "chunk_id": chunk_id, "document_id": corpus.documents[title],
                         "text": text[a:b], "embedding": _vec(text[a:b])})
    corpus.store.query(
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.chunk_id}) "
        "CREATE (a:Atom {id: row.id, document_id: row.document_id, chunk_id: row.chunk_id, kind: 'statement', "
        "text: row.text, source: 'offline'})-[:ATOM_OF]->(c) "
        "WITH a, row CALL db.create.setNodeVectorProperty(a, 'embedding', row.embedding)",
        routing=WRITE, rows=rows)


def add_facts(corpus: Corpus) -> None:
    rows = []
    for n, (head, relation, tail, title) in enumerate(FACTS):
        text = f"{head} {relation} {tail}"
        rows.append({"id": f"f{n}", "chunk_id": corpus.chunks[title], "document_id": corpus.documents[title],
                     "head": head, "relation": relation, "tail": tail, "text": text, "embedding": _vec(text)})
    corpus.store.query(
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.chunk_id}) "
        "MERGE (h:Entity {id: 'e:' + toLower(row.head)}) SET h.name = row.head, h.key = toLower(row.head) "
        "MERGE (t:Entity {id: 'e:' + toLower(row.tail)}) SET t.name = row.tail, t.key = toLower(row.tail) "
        "CREATE (f:Fact {id: row.id, document_id: row.document_id, chunk_id: row.chunk_id, head: row.head, "
        "relation: row.relation, tail: row.tail, text: row.text, source: 'test'}) "
        "CREATE (f)-[:FACT_OF]->(c), (f)-[:SUBJECT]->(h), (f)-[:OBJECT]->(t) "
        "MERGE (c)-[:MENTIONS]->(h) MERGE (c)-[:MENTIONS]->(t) "
        "WITH f, row CALL db.create.setNodeVectorProperty(f, 'embedding', row.embedding)",
        routing=WRITE, rows=rows)


@pytest.fixture
def corpus(store: GraphStore, tmp_path: Path) -> Corpus:
    return load_passages(store, tmp_path, PASSAGES)


@pytest.fixture
def distilled(corpus: Corpus) -> Corpus:
    add_atoms(corpus)
    add_facts(corpus)
    return corpus
