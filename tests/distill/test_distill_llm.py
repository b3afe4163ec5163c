"""LLM-built layers against the real Neo4j: shapes and counts, provenance, entity resolution (merging,
types, incremental, Chinese), resume after failures, delete cascade, vector indexes, tags, pseudo-graph."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import cypher
from kg.embeddings import Embedder
from kg.layers.distilled import DistillConfig, distill, expand_query_with_tags
from kg.layers.resource.documents import delete_documents
from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.retrieval.tables import aggregate_rows
from kg.shared.text import estimate_tokens
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from tests.distill.conftest import EMBEDDER, Responder, load_passages, questions_from, script_shared_call, section

PASSAGES = {
    "Morning Edition": "Bob Edwards hosted Morning Edition on National Public Radio from 1979 to 2004. "
                       "Renée Montagne co-hosted Morning Edition from 2004 to 2016.",
    "Apple Inc.": "Apple Inc. designs the iPhone in Cupertino. Apple Inc is based in California.",
    "Apple (fruit)": "An apple is the fruit of the apple tree. Apples grow in Washington.",
}
TRIPLES: dict[str, list[tuple[str, str, str, str, str]]] = {
    "Bob Edwards": [("Bob Edwards", "Person", "hosted", "Morning Edition", "Show"),
                    ("Renée Montagne", "Person", "co_hosted", "Morning Edition", "Show"),
                    ("Morning Edition", "Show", "broadcast_by", "National Public Radio", "Organization")],
    "iPhone": [("Apple Inc.", "Organization", "designs", "iPhone", "Product"),
               ("apple inc", "Company", "based_in", "California", "Location")],
    "apple tree": [("apple", "Fruit", "grows_on", "apple tree", "Plant"),
                   ("Apple", "Fruit", "grows_in", "Washington", "Location")],
    "Edwards retired": [("Bob Edwards", "Person", "worked_for", "National Public Radio", "Organization"),
                        ("Bob Edwards", "Person", "hosted", "The Bob Edwards Show", "Show")],
    "Barack": [("Barack Obama", "Person", "born_in", "Honolulu", "Location"),
               ("Barack H. Obama", "Person", "married", "Michelle Obama", "Person")],
    "北京大学": [("北京大学", "组织", "位于", "北京", "地点")],
    "北京 大学": [("北京 大学", "Organization", "founded_in", "1898", "Date")],
}


def triples_from(text: str) -> dict[str, Any]:
    chunk = section(text, "Text:")
    for marker, triples in TRIPLES.items():
        if marker in chunk:
            return {"triples": [dict(zip(("head", "head_type", "relation", "tail", "tail_type"), t, strict=True))
                                for t in triples]}
    return {"triples": []}


@pytest.fixture
def scripted(responder: Responder) -> Responder:
    # A layer chosen alone asks its own task; atoms and triples chosen together share one call per chunk.
    responder.tasks.update({"atomic_questions": questions_from, "triples": triples_from})
    script_shared_call(responder, triples_from)
    return responder


def count(store: GraphStore, query: str, **params: Any) -> int:
    return int(store.query(query, **params)[0]["n"])


def test_atoms_and_triples_shapes_and_provenance(kb: GraphStore, tmp_path: Path, scripted: Responder,
                                                 llm: OpenAICompatibleLLM) -> None:
    load_passages(kb, tmp_path, PASSAGES)
    report = distill(kb, EMBEDDER, llm, layers=["atoms", "triples"])
    assert not report.offline and report.failed == 0
    assert report.layers["atoms"].chunks == 3 and report.layers["atoms"].method == "llm"
    # Two sentences per chunk -> two questions; the duplicate question is dropped.
    assert count(kb, "MATCH (a:Atom {kind: 'question', source: 'llm'})-[:ATOM_OF]->(:Chunk) RETURN count(a) AS n") == 6
    assert report.layers["atoms"].created["Atom"] == 6
    assert count(kb, "MATCH (f:Fact)-[:FACT_OF]->(:Chunk) RETURN count(f) AS n") == 7
    assert count(kb, "MATCH (:Fact)-[:SUBJECT]->(:Entity)<-[:OBJECT]-(:Fact) RETURN count(*) AS n") >= 1
    # Provenance: every atom, fact and entity reaches its chunk, page span and document.
    for label, rel in (("Atom", "ATOM_OF"), ("Fact", "FACT_OF")):
        total = count(kb, f"MATCH (x:{label}) RETURN count(x) AS n")
        linked = count(kb, f"MATCH (x:{label})-[:{rel}]->(c:Chunk)<-[:HAS_CHUNK]-(:Section)<-[:HAS_SECTION*]-"
                           "(d:Document) WHERE d.id = x.document_id AND c.id = x.chunk_id "
                           "AND c.char_end > c.char_start RETURN count(DISTINCT x) AS n")
        assert linked == total > 0
    assert count(kb, "MATCH (e:Entity) WHERE NOT (:Chunk)-[:MENTIONS]->(e) RETURN count(e) AS n") == 0
    fact = kb.query("MATCH (f:Fact {relation: 'hosted'})-[:SUBJECT]->(h), (f)-[:OBJECT]->(t) "
                    "RETURN f.text AS text, h.name AS h, h.type AS ht, t.name AS t")[0]
    assert fact == {"text": "Bob Edwards hosted Morning Edition", "h": "Bob Edwards", "ht": "Person",
                    "t": "Morning Edition"}
    # Atoms and triples chosen together: one shared call per chunk, none of the separate tasks.
    assert set(report.llm.by_task) == {"atoms_triples"}
    assert report.llm.calls == 3 and len(scripted.seen["atoms_triples"]) == 3


def test_entity_resolution_merges_duplicates_keeps_types_apart(kb: GraphStore, tmp_path: Path,
                                                                scripted: Responder,
                                                                llm: OpenAICompatibleLLM) -> None:
    load_passages(kb, tmp_path, PASSAGES)
    distill(kb, EMBEDDER, llm, layers=["triples"])
    # "Apple Inc." (Organization) and "apple inc" (Company, a synonym) are one entity ...
    apples = kb.query("MATCH (e:Entity) WHERE toLower(e.name) STARTS WITH 'apple' "
                      "RETURN e.name AS name, e.type AS type, e.aliases AS aliases ORDER BY name, type")
    orgs = [a for a in apples if a["type"] in ("Organization", "Company")]
    assert len(orgs) == 1 and set(orgs[0]["aliases"]) | {orgs[0]["name"]} == {"Apple Inc.", "apple inc"}
    # ... while the fruit "apple"/"Apple" is another one (same name, incompatible type).
    fruits = [a for a in apples if a["type"] == "Fruit"]
    assert len(fruits) == 1
    assert count(kb, "MATCH (e:Entity {type: 'Fruit'})<-[:SUBJECT]-(f:Fact) RETURN count(f) AS n") == 2


def test_incremental_resolution_and_vector_merge(kb: GraphStore, tmp_path: Path, scripted: Responder,
                                                 llm: OpenAICompatibleLLM) -> None:
    config = DistillConfig(entity_threshold=0.8)
    first = load_passages(kb, tmp_path, PASSAGES)
    distill(kb, EMBEDDER, llm, layers=["triples"], config=config)
    entities_before = count(kb, "MATCH (e:Entity) RETURN count(e) AS n")
    second = load_passages(kb, tmp_path, {
        "Bob Edwards": "Edwards retired from National Public Radio in 2004.",
        "Obama": "Barack Obama was born in Honolulu. Barack H. Obama married Michelle Obama.",
    }, name="second")
    report = distill(kb, EMBEDDER, llm, layers=["triples"], document_ids=second, config=config)
    assert report.layers["triples"].chunks == 2
    # Bob Edwards and National Public Radio resolve to the entities of the first document.
    bob = kb.query("MATCH (e:Entity {name: 'Bob Edwards'})<-[:MENTIONS]-(c:Chunk) "
                   "RETURN count(DISTINCT e) AS entities, collect(DISTINCT c.document_id) AS docs")[0]
    assert bob["entities"] == 1 and set(bob["docs"]) == {first[0], second[0]}
    assert count(kb, "MATCH (e:Entity {name: 'National Public Radio'}) RETURN count(e) AS n") == 1
    # "Barack H. Obama" joins "Barack Obama" by vector similarity (same type, similar name); Michelle stays apart.
    obama = kb.query("MATCH (e:Entity) WHERE e.name CONTAINS 'Obama' RETURN e.name AS name, e.aliases AS aliases "
                     "ORDER BY name")
    assert [o["name"] for o in obama] == ["Barack Obama", "Michelle Obama"]
    assert obama[0]["aliases"] == ["Barack H. Obama"]
    new = {"The Bob Edwards Show", "Barack Obama", "Honolulu", "Michelle Obama"}
    assert count(kb, "MATCH (e:Entity) RETURN count(e) AS n") == entities_before + len(new)
    assert report.layers["triples"].created["Entity"] == len(new)


def test_chinese_names_resolve(kb: GraphStore, tmp_path: Path, scripted: Responder,
                               llm: OpenAICompatibleLLM) -> None:
    load_passages(kb, tmp_path, {"北大": "北京大学位于北京。", "历史": "北京 大学 成立于1898年。"})
    distill(kb, EMBEDDER, llm, layers=["triples"])
    pku = kb.query("MATCH (e:Entity) WHERE e.name STARTS WITH '北京' AND e.name <> '北京' "
                   "RETURN e.name AS name, e.aliases AS aliases, COUNT { (e)<-[:MENTIONS]-() } AS chunks")
    assert len(pku) == 1 and pku[0]["chunks"] == 2
    assert {pku[0]["name"], *pku[0]["aliases"]} == {"北京大学", "北京 大学"}


def test_bad_output_fails_chunk_whole_and_resume_has_no_duplicates(
        kb: GraphStore, tmp_path: Path, scripted: Responder, llm: OpenAICompatibleLLM) -> None:
    load_passages(kb, tmp_path, PASSAGES)
    scripted.tasks["atomic_questions"] = lambda text: "no JSON here" if "iPhone" in text else questions_from(text)
    first = distill(kb, EMBEDDER, llm, layers=["atoms"])
    assert first.layers["atoms"].chunks == 2 and len(first.layers["atoms"].failed) == 1
    assert "atomic_questions" in first.layers["atoms"].failed[0].error
    failed_chunk = first.layers["atoms"].failed[0].id
    assert count(kb, "MATCH (a:Atom {chunk_id: $id}) RETURN count(a) AS n", id=failed_chunk) == 0
    assert count(kb, "MATCH (c:Chunk {id: $id}) WHERE 'atoms' IN coalesce(c.distilled, []) "
                     "RETURN count(c) AS n", id=failed_chunk) == 0
    scripted.tasks["atomic_questions"] = questions_from
    scripted.seen.clear()
    second = distill(kb, EMBEDDER, llm, layers=["atoms"])
    assert second.layers["atoms"].chunks == 1 and second.failed == 0
    assert len(scripted.seen["atomic_questions"]) == 1  # only the failed chunk was asked again
    assert count(kb, "MATCH (a:Atom) RETURN count(a) AS n") == 6
    assert count(kb, "MATCH (a:Atom) WITH a.chunk_id AS c, a.text AS t, count(*) AS k WHERE k > 1 "
                     "RETURN count(*) AS n") == 0
    # A forced re-run rewrites every chunk without duplicating anything.
    distill(kb, EMBEDDER, llm, layers=["atoms"], force=True)
    assert count(kb, "MATCH (a:Atom) RETURN count(a) AS n") == 6


class FailingEmbedder(Embedder):
    """Fails on the n-th call: an interruption in the middle of a job."""

    def __init__(self, inner: Embedder, fail_on: int) -> None:
        self.inner, self.fail_on, self.calls = inner, fail_on, 0
        self.name, self.dimensions = inner.name, inner.dimensions

    def embed(self, texts: Any) -> npt.NDArray[np.float32]:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("injected failure")
        return self.inner.embed(texts)


def test_interrupted_job_resumes_where_it_stopped(kb: GraphStore, tmp_path: Path, scripted: Responder,
                                                  llm: OpenAICompatibleLLM) -> None:
    load_passages(kb, tmp_path, PASSAGES)
    with pytest.raises(RuntimeError, match="injected"):
        distill(kb, FailingEmbedder(EMBEDDER, fail_on=3), llm, layers=["triples"], batch_size=1)
    done = count(kb, "MATCH (c:Chunk) WHERE 'triples' IN coalesce(c.distilled, []) RETURN count(c) AS n")
    assert 0 < done < 3
    facts_done = count(kb, "MATCH (f:Fact) RETURN count(f) AS n")
    report = distill(kb, EMBEDDER, llm, layers=["triples"], batch_size=1)
    assert report.layers["triples"].pending == 3 - done
    assert count(kb, "MATCH (f:Fact) RETURN count(f) AS n") == 7 > facts_done
    assert count(kb, "MATCH (c:Chunk)-[m:MENTIONS]->(e) WITH c, e, count(m) AS k WHERE k > 1 "
                     "RETURN count(*) AS n") == 0


def test_delete_cascade_keeps_shared_entities(kb: GraphStore, tmp_path: Path, scripted: Responder,
                                              llm: OpenAICompatibleLLM) -> None:
    first = load_passages(kb, tmp_path, PASSAGES)
    second = load_passages(kb, tmp_path, {"Bob Edwards": "Edwards retired from National Public Radio in 2004."},
                           "second")
    distill(kb, EMBEDDER, llm, layers=["atoms", "triples", "tables"])
    delete_documents(kb, [first[0]])
    for label in ("Atom", "Fact", "Row"):
        assert count(kb, f"MATCH (x:{label} {{document_id: $d}}) RETURN count(x) AS n", d=first[0]) == 0
    names = {r["name"] for r in kb.query("MATCH (e:Entity) RETURN e.name AS name")}
    assert {"Bob Edwards", "National Public Radio"} <= names  # still mentioned by the second document
    assert "Renée Montagne" not in names and "Morning Edition" not in names
    assert count(kb, "MATCH (x:Fact {document_id: $d}) RETURN count(x) AS n", d=second[0]) == 2


def test_vector_indexes_answer_for_each_layer(kb: GraphStore, tmp_path: Path, scripted: Responder,
                                              llm: OpenAICompatibleLLM) -> None:
    load_passages(kb, tmp_path, PASSAGES)
    distill(kb, EMBEDDER, llm, layers=["atoms", "triples"])
    # Entities hold vectors without an index (no query searches them): the nearest by exact cosine.
    top = kb.query("MATCH (e:Entity) RETURN e.name AS value, vector.similarity.cosine(e.embedding, $v) AS score "
                   "ORDER BY score DESC", v=EMBEDDER.embed_one("Renée Montagne").tolist())
    assert top[0]["value"] == "Renée Montagne" and top[0]["score"] > 0.99
    for index, text, field, expected in (
        ("fact_embedding", "Bob Edwards hosted Morning Edition", "text", "Bob Edwards hosted Morning Edition"),
        ("atom_embedding", "What does the text state about Apples (1)?", "text",
         "What does the text state about Apples (1)?"),
    ):
        # k=10, not 1: HNSW search is approximate, and the index still holds earlier tests' deleted vectors.
        top = kb.query(f"CALL db.index.vector.queryNodes('{index}', 10, $v) YIELD node, score "
                       f"RETURN node.{field} AS value, score", v=EMBEDDER.embed_one(text).tolist())
        assert top[0]["value"] == expected and top[0]["score"] > 0.99


def test_relation_rows_answer_aggregations(kb: GraphStore, tmp_path: Path, scripted: Responder,
                                           llm: OpenAICompatibleLLM) -> None:
    load_passages(kb, tmp_path, PASSAGES)
    second = load_passages(kb, tmp_path, {"Bob Edwards": "Edwards retired from National Public Radio in 2004."},
                           "second")
    distill(kb, EMBEDDER, llm, layers=["triples", "tables"])
    hosted = aggregate_rows(kb, None, "show", "count", {"relation": "hosted", "person": "bob edwards"})
    assert hosted.value == 2
    assert aggregate_rows(kb, None, "object", "count", {"relation": "grows_in"}).value == 1
    assert count(kb, "MATCH (:Chunk {document_id: $d})-[:HAS_ROW]->(r:Row {kind: 'relation'}) "
                     "RETURN count(r) AS n", d=second[0]) == 2


def test_tags_with_aliases_expand_queries(kb: GraphStore, tmp_path: Path, scripted: Responder,
                                          llm: OpenAICompatibleLLM) -> None:
    scripted.tasks["tag_classes"] = lambda _t: {"classes": [{"name": "medium", "description": "media"},
                                                            {"name": "domain", "description": "field"}]}
    # Tags are phrases of their chunk: "journalism" (the chunk never says it) and a class the scheme does not
    # have are dropped and counted, as a small model's echoes of the prompt are.
    scripted.tasks["chunk_tags"] = lambda t: (
        {"tags": {"medium": ["public radio"], "domain": ["journalism"], "class_name": ["Morning Edition"]}}
        if "Radio" in t else {"tags": {"domain": ["apple tree" if "tree" in t else "iPhone"]}})
    scripted.tasks["tag_aliases"] = lambda t: {"aliases": {"public radio": ["NPR", "radio station"],
                                                           "iPhone": ["smartphone"]}}
    load_passages(kb, tmp_path, PASSAGES)
    report = distill(kb, EMBEDDER, llm, layers=["tags"])
    assert report.layers["tags"].created["Tag"] == 3 and report.layers["tags"].created["TAGGED"] == 3
    assert report.llm.by_task["chunk_tags"].invalid_items == 2
    tag = kb.query("MATCH (c:Chunk)-[:TAGGED]->(t:Tag {name: 'public radio'}) "
                   "RETURN t.class AS class, t.aliases AS aliases, c.title AS title")[0]
    assert tag == {"class": "medium", "aliases": ["NPR", "radio station"], "title": "Morning Edition"}
    assert expand_query_with_tags(kb, "Who hosted the morning show on NPR?") == ["public radio"]
    assert expand_query_with_tags(kb, "Which smartphone does a company in Cupertino design?") == ["iPhone"]
    assert expand_query_with_tags(kb, "What grows on an apple tree?") == ["apple tree"]
    assert expand_query_with_tags(kb, "Nothing matches here") == []
    # The lookup seeks the tag_keys index: no operator visits every tag (the scan it replaces took 26 ms at
    # 10,000 tags and 786 ms at a million).
    assert isinstance(kb, Neo4jGraphStore)
    _, summary, _ = kb.driver.execute_query("EXPLAIN " + cypher.load("distill/tags_for_terms"),
                                            parameters_={"terms": ["npr"], "queries": ['"npr"']},
                                            database_=kb.database)
    operators = str(summary.plan)
    assert "NodeByLabelScan" not in operators and "AllNodesScan" not in operators
    assert "db.index.fulltext.queryNodes" in operators
    # The classes are kept: a later run does not ask for them again.
    scripted.seen.clear()
    distill(kb, EMBEDDER, llm, layers=["tags"], force=True)
    assert "tag_classes" not in scripted.seen


CJK_TAGS = {"知识图谱把实体和关系存进图数据库。": "知识图谱",
            "データベースは関係を辺として保存します。": "データベース",
            "심근경색은 심장 근육이 손상되는 질환이다.": "심근경색"}


def test_japanese_and_korean_questions_find_tags_as_chinese_ones_do(kb: GraphStore, tmp_path: Path,
                                                                   scripted: Responder,
                                                                   llm: OpenAICompatibleLLM) -> None:
    # A question's runs of CJK characters give its 2-8 character terms: hanzi, and kana and hangul too (a Korean
    # word or a voiced kana keys decomposed, so the terms are keyed as the tag names are).
    scripted.tasks["tag_classes"] = lambda _t: {"classes": [{"name": "domain", "description": "field"}]}
    scripted.tasks["chunk_tags"] = lambda t: {"tags": {"domain": [tag for text, tag in CJK_TAGS.items() if text in t]}}
    scripted.tasks["tag_aliases"] = lambda _t: {"aliases": {}}
    load_passages(kb, tmp_path, {f"p{i}": text for i, text in enumerate(CJK_TAGS)})
    assert distill(kb, EMBEDDER, llm, layers=["tags"]).layers["tags"].created["Tag"] == 3
    assert expand_query_with_tags(kb, "知识图谱是什么?") == ["知识图谱"]
    assert expand_query_with_tags(kb, "データベースとは何ですか?") == ["データベース"]
    assert expand_query_with_tags(kb, "심근경색의 증상은 무엇인가요?") == ["심근경색"]
    assert expand_query_with_tags(kb, "图数据库是什么?") == []


def fact_items_from(text: str) -> dict[str, Any]:
    chunk = section(text, "Text:")
    facts = [{"topic": "t", "fact": s.strip()} for s in chunk.split(". ") if s.strip()]
    return {"items": [*facts, {"topic": "t", "fact": "The Moon is made of green cheese."}]}


def test_pseudograph_verifies_items_builds_mind_maps_and_fuses(kb: GraphStore, tmp_path: Path,
                                                               scripted: Responder,
                                                               llm: OpenAICompatibleLLM) -> None:
    scripted.tasks["fact_items"] = fact_items_from
    scripted.tasks["mind_map"] = lambda t: {"topic": "Public radio", "branches": [
        {"label": "Hosts", "children": [{"label": "Bob Edwards", "children": []}]},
        {"label": "Other", "children": []}]}
    docs = load_passages(kb, tmp_path, {
        "Morning Edition": PASSAGES["Morning Edition"],
        "Morning Edition (copy)": PASSAGES["Morning Edition"],
    })
    report = distill(kb, EMBEDDER, llm, layers=["pseudograph"], config=DistillConfig(fusion=True))
    entry = report.layers["pseudograph"]
    assert entry.chunks == 2 and entry.failed == []
    # The invented item fails ROUGE-L, is asked again once (bounded), and is dropped every time.
    assert entry.created["FactItem rejected"] == 4
    assert len(scripted.seen["fact_items"]) == 4
    assert entry.created["FactItem"] == 4 and entry.created["Topic"] == 2
    paths = kb.query("MATCH (d:Document)<-[:TOPIC_OF]-(t:Topic)-[:HAS_ROUTE]->(r1:Route)-[:HAS_ROUTE]->(r2:Route)"
                     "-[:HAS_ITEM]->(f:FactItem)-[:ITEM_OF]->(c:Chunk) WHERE c.document_id = d.id "
                     "RETURN f.path_text AS path, f.rouge_l AS rouge ORDER BY path")
    assert len(paths) == 4 and all(p["path"].startswith("Public radio > Hosts > Bob Edwards > ") for p in paths)
    assert all(p["rouge"] >= 0.4 for p in paths)
    assert count(kb, "MATCH (f:FactItem) WHERE f.text CONTAINS 'cheese' RETURN count(f) AS n") == 0
    # Fusion: the two documents' topics and identical facts meet in super-nodes.
    assert count(kb, "MATCH (s:SuperTopic)-[:SIMILAR]->(t:Topic) RETURN count(t) AS n") == 2
    assert count(kb, "MATCH (s:SuperFact)-[:SIMILAR]->(f:FactItem) WITH s, count(f) AS k WHERE k = 2 "
                     "RETURN count(s) AS n") == 2
    top = kb.query("CALL db.index.vector.queryNodes('factitem_embedding', 1, $v) YIELD node RETURN node.text AS t",
                   v=EMBEDDER.embed_one(paths[0]["path"]).tolist())
    assert top[0]["t"] in paths[0]["path"]
    # Deleting one document leaves no fusion node with a dangling member.
    delete_documents(kb, [docs[1]])
    assert count(kb, "MATCH (s:SuperTopic)-[:SIMILAR]->(t:Topic) RETURN count(t) AS n") == 1
    assert count(kb, "MATCH (n) WHERE n:Topic OR n:Route OR n:FactItem RETURN count(n) AS n") == 1 + 3 + 2 - 1


def test_a_long_documents_mind_map_prompt_shows_an_even_sample_and_every_item_is_placed(
        kb: GraphStore, tmp_path: Path, scripted: Responder, llm: OpenAICompatibleLLM) -> None:
    scripted.tasks["fact_items"] = fact_items_from
    scripted.tasks["mind_map"] = lambda t: {"topic": "Stations", "branches": [
        {"label": "Readings", "children": []}, {"label": "Outages", "children": []}]}
    text = ". ".join(f"Station {n:02d} reported a reading of {n} degrees" for n in range(1, 25)) + "."
    load_passages(kb, tmp_path, {"Station log": text})
    report = distill(kb, EMBEDDER, llm, layers=["pseudograph"], config=DistillConfig(mind_map_tokens=60))
    assert report.layers["pseudograph"].failed == []
    [prompt] = scripted.seen["mind_map"]
    shown = sorted(int(n) for n in re.findall(r"- Station (\d\d) reported", prompt))
    assert 2 <= len(shown) < 24 and shown[0] == 1 and shown[-1] == 24  # the whole span, sampled
    assert estimate_tokens("\n".join(f"- Station {n:02d} reported a reading of {n} degrees" for n in shown)) <= 60
    placed = kb.query("MATCH (:Topic)-[:HAS_ROUTE]->(:Route)-[:HAS_ITEM]->(f:FactItem) RETURN count(f) AS n")
    assert placed[0]["n"] == 24  # every item hangs under a route, shown to the model or not


def test_names_with_other_numbers_never_merge(kb: GraphStore) -> None:
    from kg.layers.distilled import EntityResolver
    from kg.layers.distilled.text import name_similarity

    assert name_similarity("apollo 11", "apollo 13") == 0.0 < name_similarity("apollo 11", "apollo eleven 11")
    # A threshold of -1 lets every vector through: only types and names decide.
    resolver = EntityResolver(kb, EMBEDDER, DistillConfig(entity_threshold=-1.0))
    out = resolver.resolve([("Apollo 11", "Entity"), ("Apollo 13", "Entity"), ("apollo 11", "Entity")])
    assert out.ids[("Apollo 11", "Entity")] == out.ids[("apollo 11", "Entity")] != out.ids[("Apollo 13", "Entity")]
