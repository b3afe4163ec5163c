"""Replacing a document keeps what was distilled from its unchanged chunks (same text, same id)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kg.embeddings import HashingEmbedder
from kg.layers.corpus.ingest import Ingestor
from kg.layers.distilled import distill
from kg.layers.resource.documents import delete_documents
from kg.llm import OfflineLLM
from kg.shared.ids import document_id
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema

EMBEDDER = HashingEmbedder(dimensions=64)
LAYERS = ["atoms", "triples", "tables", "pseudograph"]
CITIES = ["Zurich", "Geneva", "Basel", "Lausanne", "Bern", "Lucerne", "Lugano", "Winterthur", "St. Gallen", "Thun"]


def paragraph(n: int, city: str) -> str:
    return (f"The {city} Museum of Engines opened in {1900 + n}. Anna Keller{n} founded the {city} Museum of "
            f"Engines. The museum holds {n + 3} locomotives built by Sulzer Brothers.")


@pytest.fixture
def ingestor(store: GraphStore) -> Ingestor:
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    return Ingestor(store, EMBEDDER, batch_size=50, chunk_tokens=30, chunk_overlap=0)


def chunk_ids(store: GraphStore, did: str) -> list[str]:
    return [r["id"] for r in store.query("MATCH (c:Chunk {document_id: $d}) RETURN c.id AS id ORDER BY c.order", d=did)]


def distilled(store: GraphStore, did: str) -> dict[str, object]:
    """What a document's graph holds, by content: chunks in order with their atoms and facts, the chain of
    NEXT links, and the mind map's size."""
    chunks = store.query(
        "MATCH (d:Document {id: $d})-[:HAS_SECTION*]->(:Section)-[:HAS_CHUNK]->(c:Chunk) "
        "RETURN c.text AS text, c.order AS order, c.char_start AS start, coalesce(c.distilled, []) AS marks, "
        "COLLECT { MATCH (c)<-[:ATOM_OF]-(a:Atom) RETURN a.text ORDER BY a.text } AS atoms, "
        "COLLECT { MATCH (c)<-[:FACT_OF]-(f:Fact)-[:SUBJECT]->(h), (f)-[:OBJECT]->(t) "
        "          RETURN f.relation + '|' + h.name + '|' + t.name AS x ORDER BY x } AS facts, "
        "COLLECT { MATCH (c)-[:HAS_ROW]->(r:Row) RETURN r.kind + ':' + reduce(s = '', x IN r.cells | s + x + ';') "
        "          AS x ORDER BY x } AS rows, "
        "COLLECT { MATCH (c)-[:NEXT]->(n:Chunk) RETURN n.order } AS next ORDER BY order", d=did)
    counts = store.query(
        "RETURN COUNT { (:Atom {document_id: $d}) } AS atoms, COUNT { (:Fact {document_id: $d}) } AS facts, "
        "COUNT { (:FactItem {document_id: $d}) } AS items, COUNT { (:Topic {document_id: $d}) } AS topics, "
        "COUNT { (:Row {document_id: $d})-[:ROW_OF]->(:Table) } AS table_rows, "
        "COUNT { (a:Atom {document_id: $d}) WHERE NOT (a)-[:ATOM_OF]->(:Chunk) } AS loose_atoms, "
        "COUNT { (c:Chunk {document_id: $d}) WHERE COUNT { (c)<-[:HAS_CHUNK]-() } <> 1 } AS misplaced", d=did)[0]
    return {"chunks": [{**c, "marks": sorted(c["marks"])} for c in chunks], **counts}


def test_a_replaced_document_keeps_the_distillation_of_its_unchanged_chunks(
        tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    path = tmp_path / "museums.md"
    paragraphs = [paragraph(n, city) for n, city in enumerate(CITIES)]
    paragraphs.insert(5, "| museum | engines |\n|---|---|\n| Zurich | 3 |\n| Geneva | 4 |")
    path.write_text("\n\n".join(paragraphs) + "\n", "utf-8")
    did = document_id(str(path))
    ingestor.load([path])
    distill(store, EMBEDDER, OfflineLLM(), layers=LAYERS)
    old_ids = chunk_ids(store, did)
    atoms_before = {r["chunk"]: r["ids"] for r in store.query(
        "MATCH (a:Atom {document_id: $d}) RETURN a.chunk_id AS chunk, collect(elementId(a)) AS ids", d=did)}

    # A paragraph inserted first, one edited, one dropped.
    edited = [paragraph(42, "Chur"), *paragraphs]
    lausanne = edited.index(paragraph(3, "Lausanne"))
    edited[lausanne] = edited[lausanne].replace("locomotives", "steam engines")
    edited.remove(paragraph(7, "Winterthur"))
    path.write_text("\n\n".join(edited) + "\n", "utf-8")
    report = ingestor.load([path])
    new_ids = chunk_ids(store, did)
    unchanged = set(old_ids) & set(new_ids)
    assert report.files[0].status == "replaced"
    assert report.files[0].kept_chunks == len(unchanged) == len(old_ids) - 2 and len(new_ids) == len(old_ids)

    # The kept chunks' atoms are the same nodes; the new chunks wait for atoms and triples, every chunk for the
    # mind map (built over the document's parts); nothing of the dropped or edited paragraphs is left.
    atoms_now = {r["chunk"]: r["ids"] for r in store.query(
        "MATCH (a:Atom {document_id: $d}) RETURN a.chunk_id AS chunk, collect(elementId(a)) AS ids", d=did)}
    assert atoms_now == {c: atoms_before[c] for c in unchanged}
    marks = {(r["id"], r["kind"]): sorted(r["marks"]) for r in store.query(
        "MATCH (c:Chunk {document_id: $d}) RETURN c.id AS id, c.kind AS kind, coalesce(c.distilled, []) AS marks",
        d=did)}
    kept_marks = {"text": ["atoms", "tables", "triples"], "table": ["atoms", "triples"]}  # a table's rows: anew
    assert marks == {(c, kind): kept_marks[kind] if c in unchanged else [] for c, kind in marks}
    assert {kind for c, kind in marks if c in unchanged} == {"text", "table"}
    assert store.query("RETURN COUNT { (:FactItem {document_id: $d}) } AS n", d=did)[0]["n"] == 0
    assert not store.query("MATCH (f:Fact {document_id: $d}) WHERE f.text CONTAINS 'Winterthur' RETURN f", d=did)

    distill(store, EMBEDDER, OfflineLLM(), layers=LAYERS)
    replaced = distilled(store, did)

    # The same graph as the edited file loaded and distilled from nothing.
    delete_documents(store, [did])
    assert ingestor.load([path]).files[0].status == "loaded"
    distill(store, EMBEDDER, OfflineLLM(), layers=LAYERS)
    fresh = distilled(store, did)
    assert replaced == fresh
    assert fresh["loose_atoms"] == fresh["misplaced"] == 0 and fresh["items"] and fresh["topics"]
    assert fresh["table_rows"] == 2 and any(r.startswith("relation:") for c in fresh["chunks"] for r in c["rows"])
    assert Counter(len(c["next"]) for c in fresh["chunks"]) == {1: len(new_ids) - 1, 0: 1}
