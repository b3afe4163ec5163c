"""Offline distillation (no LLM) of real HotpotQA passages: statements, spaCy entities, co-occurrence facts,
keyphrase tags and the offline pseudo-graph, all named offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg.layers.distilled import distill
from kg.layers.distilled.models import CO_OCCURRENCE
from kg.layers.resource.documents import delete_documents
from kg.llm import OfflineLLM
from kg.store.base import GraphStore
from tests.distill.conftest import EMBEDDER, load_passages


@pytest.fixture
def hotpot(kb: GraphStore, tmp_path: Path, shared_data: Path) -> list[str]:
    corpus = json.loads((shared_data / "hotpotqa_sample" / "hotpotqa_train_corpus.json").read_text("utf-8"))
    passages = {title: " ".join(sents) for title, sents in list(corpus.items())[:100] if " ".join(sents).strip()}
    return load_passages(kb, tmp_path, passages)


def count(store: GraphStore, query: str) -> int:
    return int(store.query(query)[0]["n"])


def test_offline_default_layers_on_hotpotqa(kb: GraphStore, hotpot: list[str]) -> None:
    report = distill(kb, EMBEDDER, OfflineLLM())
    assert report.offline and report.failed == 0 and set(report.layers) == {"atoms", "triples", "tables"}
    assert report.layers["triples"].method.startswith("offline (spacy:")
    chunks = count(kb, "MATCH (c:Chunk) RETURN count(c) AS n")
    assert report.layers["atoms"].chunks == chunks >= len(hotpot)
    atoms = count(kb, "MATCH (a:Atom {kind: 'statement', source: 'offline'})-[:ATOM_OF]->(:Chunk) RETURN count(a) AS n")
    assert atoms == count(kb, "MATCH (a:Atom) RETURN count(a) AS n") > chunks
    assert count(kb, "MATCH (f:Fact {source: 'offline'})-[:FACT_OF]->(:Chunk) RETURN count(f) AS n") > chunks
    # A fact with a relation phrase has a vector (the fact index's), a bare co-occurrence none.
    vectors = {r["related"]: (r["with"], r["without"]) for r in kb.query(
        "MATCH (f:Fact) RETURN f.relation <> $co AS related, count(f.embedding) AS with, "
        "count(*) - count(f.embedding) AS without", co=CO_OCCURRENCE)}
    assert vectors[True][0] > 0 == vectors[True][1] and vectors[False][0] == 0 < vectors[False][1]
    assert count(kb, "MATCH (e:Entity {source: 'offline'}) RETURN count(e) AS n") > 100
    # Entities shared across passages link them (the point of the triples layer offline).
    assert count(kb, "MATCH (e:Entity) WHERE COUNT { (e)<-[:MENTIONS]-() } > 1 RETURN count(e) AS n") > 10
    assert count(kb, "MATCH (r:Row {kind: 'relation'})<-[:HAS_ROW]-(:Chunk) RETURN count(r) AS n") > 0
    assert report.llm.calls == 0
    # Nothing left to do: a second run finds no pending chunk.
    again = distill(kb, EMBEDDER, OfflineLLM())
    assert all(entry.pending == 0 for entry in again.layers.values())


def test_offline_tags_and_pseudograph(kb: GraphStore, hotpot: list[str]) -> None:
    report = distill(kb, EMBEDDER, OfflineLLM(), layers=["tags", "pseudograph"], document_ids=hotpot[:40])
    assert report.layers["tags"].method == "offline (tf-idf keyphrases)"
    assert count(kb, "MATCH (:Chunk)-[:TAGGED]->(t:Tag {class: 'keyphrase', source: 'offline'}) "
                     "RETURN count(DISTINCT t) AS n") > 0
    assert count(kb, "MATCH (t:Tag) WHERE COUNT { (t)<-[:TAGGED]-() } > 1 RETURN count(t) AS n") > 0
    entry = report.layers["pseudograph"]
    assert entry.method == "offline" and entry.created["Topic"] == 40
    topic = kb.query("MATCH (d:Document)<-[:TOPIC_OF]-(t:Topic)-[:HAS_ROUTE]->(r:Route)-[:HAS_ITEM]->(f:FactItem) "
                     "RETURN d.title AS title, t.text AS topic, f.path_text AS path LIMIT 1")[0]
    assert topic["topic"] == topic["title"] and topic["path"].startswith(topic["title"] + " > ")
    assert count(kb, "MATCH (f:FactItem) WHERE NOT (f)-[:ITEM_OF]->(:Chunk) RETURN count(f) AS n") == 0


def test_table_rows_are_typed_and_aggregated(kb: GraphStore, tmp_path: Path) -> None:
    from kg.layers.corpus.ingest import Ingestor
    from kg.retrieval.tables import aggregate_rows

    path = tmp_path / "sites.csv"
    path.write_text("Site name,Country,Turbines,Capacity (MW)\nNorth,Denmark,10,\"1,250.5\"\n"
                    "South,Denmark,14,900\nEast,Spain,n/a,300\n", "utf-8")
    Ingestor(kb, EMBEDDER).load([path])
    report = distill(kb, EMBEDDER, OfflineLLM(), layers=["tables"])
    assert report.layers["tables"].created["Row from tables"] == 3
    rows = kb.query("MATCH (c:Chunk)-[:HAS_ROW]->(r:Row)-[:ROW_OF]->(t:Table)<-[:REPRESENTS]-(c) "
                    "RETURN r.cells AS cells, r.c_capacity_mw AS mw, r.c_turbines AS turbines, t.id AS table "
                    "ORDER BY r.index")
    assert rows[0]["cells"] == ["Site name=North", "Country=Denmark", "Turbines=10", "Capacity (MW)=1,250.5"]
    assert [r["mw"] for r in rows] == [1250.5, 900.0, 300.0]
    assert rows[2]["turbines"] is None  # "n/a" is not a number
    table = rows[0]["table"]
    assert aggregate_rows(kb, table, "Turbines", "sum").value == 24
    assert aggregate_rows(kb, table, "Capacity (MW)", "max", {"country": "denmark"}).value == 1250.5
    assert aggregate_rows(kb, table, "Site name", "count", {"Country": "Denmark"}).value == 2
    assert aggregate_rows(kb, None, "turbines", "avg", {"turbines": 14}).value == 14
    assert aggregate_rows(kb, table, "Capacity (MW)", "min", {"Country": "Spain"}).value == 300


def test_rule_based_names_keep_a_short_trailing_number_but_not_a_year() -> None:
    from kg.layers.distilled.offline import OfflineExtractor

    found = OfflineExtractor(model=None).entities("Apollo 11 landed in 1969, and Hamburg 1990 was near Boeing 747.")
    assert [(e.name, e.type) for e in found] == [
        ("Apollo 11", "Entity"), ("1969", "Date"), ("Hamburg", "Entity"), ("1990", "Date"), ("Boeing 747", "Entity")]


def test_deleting_a_document_takes_the_aliases_only_it_used(kb: GraphStore, tmp_path: Path) -> None:
    first = load_passages(kb, tmp_path, {"Trains": "Trains leave from Zurich every hour."})
    second = load_passages(kb, tmp_path, {"Banks": "The bank has its seat in Zürich today."}, "second")
    distill(kb, EMBEDDER, OfflineLLM(), layers=["triples"])
    zurich = "MATCH (e:Entity) WHERE e.key STARTS WITH 'zurich' RETURN e.name AS name, e.aliases AS aliases"
    [entity] = kb.query(zurich)
    assert (entity["name"], entity["aliases"]) == ("Zurich", ["Zürich"])  # one entity, both names
    delete_documents(kb, second)
    [entity] = kb.query(zurich)
    assert (entity["name"], entity["aliases"]) == ("Zurich", [])  # only the deleted document wrote "Zürich"
    delete_documents(kb, first)
    assert kb.query(zurich) == []


def test_a_forced_triples_run_writes_each_mention_once(kb: GraphStore, hotpot: list[str]) -> None:
    # Mentions are created, not merged: the clear before each batch's write is what keeps them single.
    mentions = "MATCH (:Chunk)-[m:MENTIONS]->(:Entity) RETURN count(m) AS n"
    distill(kb, EMBEDDER, OfflineLLM(), layers=["triples"], document_ids=hotpot[:20])
    before = count(kb, mentions)
    distill(kb, EMBEDDER, OfflineLLM(), layers=["triples"], document_ids=hotpot[:20], force=True)
    assert count(kb, mentions) == before > 20
    assert count(kb, "MATCH (c:Chunk)-[m:MENTIONS]->(e) WITH c, e, count(m) AS k WHERE k > 1 "
                     "RETURN count(*) AS n") == 0
