"""Rules the distilled layer must keep against the real Neo4j: similarity thresholds are cosines on every
path, a generic type never bridges two specific ones, fusion reaches other documents however many items
a document has and resumes after a failure, and every distilled node reaches its chunk, page and document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from neo4j import RoutingControl

import cypher
from kg.errors import ConfigError
from kg.layers.distilled import DistillConfig, EntityResolver, distill, entity_row, pseudograph
from kg.layers.distilled.pseudograph import FACTITEM_KEYS, TOPIC_KEYS
from kg.layers.distilled.resolve import ENTITY_BLOCKS
from kg.layers.distilled.stored_keys import ensure_stored_keys
from kg.llm import OfflineLLM
from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.store.base import GraphStore
from kg.store.lucene import whole_terms_queries
from kg.testing import FailingStore
from tests.distill.conftest import (
    EMBEDDER,
    MarkerEmbedder,
    Responder,
    at_cosine,
    load_passages,
    load_pdf,
    script_shared_call,
    section,
)

E0 = at_cosine(1.0)
NEAR = at_cosine(0.90)  # the index scores it (1 + 0.90) / 2 = 0.95: above 0.92 unless converted back
# Fusion finds fact items by the words of their path text (fusion keys) before it compares their vectors: the
# items of these tests say nearly the same thing, and their markers set how near their vectors are.
MEASURED = "was measured twice by the Basel field laboratory during the spring water survey."


def count(store: GraphStore, query: str, **params: Any) -> int:
    return int(store.query(query, **params)[0]["n"])


def write_entity(store: GraphStore, id_: str, name: str, type_: str, vector: Any = None) -> None:
    embedding = (EMBEDDER.embed_one(name) if vector is None else np.asarray(vector)).tolist()
    store.write("distill/merge_entities", rows=[entity_row(id_, name, type_, source="test", embedding=embedding)])


# -- 1. thresholds are cosines --------------------------------------------------------------------------------


def test_entity_vectors_below_the_threshold_do_not_merge(kb: GraphStore) -> None:
    embedder = MarkerEmbedder({"Barack H. Obama": NEAR, "Barack Obama": E0})
    write_entity(kb, "ent_obama", "Barack Obama", "Person", E0)
    [row] = kb.read("distill/entities_by_blocks", limit=10, threshold=0.0,
                    rows=[{"i": 0, "query": whole_terms_queries(["=barack obama"])[0], "embedding": NEAR.tolist()}])
    assert row["score"] == pytest.approx(0.90, abs=1e-3)  # a cosine, not the index's (1 + cos) / 2
    mention = ("Barack H. Obama", "Person")
    strict = EntityResolver(kb, embedder, DistillConfig(entity_threshold=0.92)).resolve([mention])
    assert strict.ids[mention] != "ent_obama" and len(strict.new) == 1
    loose = EntityResolver(kb, embedder, DistillConfig(entity_threshold=0.85)).resolve([mention])
    assert loose.ids[mention] == "ent_obama" and loose.new == []
    # The same pair inside one batch (raw cosine between the batch's vectors) obeys the same threshold.
    pair = [("Barack Obama", "Politician"), ("Barack H. Obama", "Politician")]
    apart = EntityResolver(kb, embedder, DistillConfig(entity_threshold=0.92)).resolve(pair)
    assert apart.ids[pair[0]] != apart.ids[pair[1]]
    together = EntityResolver(kb, embedder, DistillConfig(entity_threshold=0.85)).resolve(pair)
    assert together.ids[pair[0]] == together.ids[pair[1]]


def test_fact_items_below_the_fusion_threshold_do_not_fuse(kb: GraphStore, tmp_path: Path) -> None:
    embedder = MarkerEmbedder({"xa01": E0, "xb01": NEAR})
    load_passages(kb, tmp_path, {"Alpha": f"The sample xa01 {MEASURED}",
                                 "Beta": f"The sample xb01 {MEASURED}"})
    report = distill(kb, embedder, OfflineLLM(), layers=["pseudograph"],
                     config=DistillConfig(fusion=True, fact_fusion=0.92))
    assert report.layers["pseudograph"].created["SuperFact groups"] == 0
    assert count(kb, "MATCH (s:SuperFact) RETURN count(s) AS n") == 0
    report = distill(kb, embedder, OfflineLLM(), layers=["pseudograph"], force=True,
                     config=DistillConfig(fusion=True, fact_fusion=0.88))
    assert report.layers["pseudograph"].created["SuperFact groups"] == 1
    assert count(kb, "MATCH (:SuperFact)-[:SIMILAR]->(f:FactItem) RETURN count(f) AS n") == 2


def test_fusion_joins_groups_found_by_different_concurrent_readers(kb: GraphStore, tmp_path: Path) -> None:
    """Fusion's lookups are split between ``fusion_readers``; a chain A-B-C-D whose links are found
    by different readers (each item is near only its neighbours: 25 degrees apart, cosine 0.906 against the
    threshold 0.88) is still one group, the same one a single reader finds."""
    angles = {"xa01": 0, "xb01": 25, "xc01": 50, "xd01": 75}
    embedder = MarkerEmbedder({m: at_cosine(float(np.cos(np.radians(a)))) for m, a in angles.items()})
    docs = load_passages(kb, tmp_path, {f"Doc {m}": f"The sample {m} {MEASURED}" for m in angles})
    members = "MATCH (s:SuperFact)-[:SIMILAR]->(f:FactItem) RETURN s.id AS s, collect(f.document_id) AS docs"
    for readers in (1, 2, 3, 4):
        distill(kb, embedder, OfflineLLM(), layers=["pseudograph"], force=True,
                config=DistillConfig(fusion=True, fact_fusion=0.88, fusion_readers=readers))
        assert [sorted(r["docs"]) for r in kb.query(members)] == [sorted(docs)], readers


def test_a_node_that_links_two_fused_groups_joins_them_into_one(kb: GraphStore, tmp_path: Path) -> None:
    """Groups are connected components across runs: a later item near one member of each of two groups that an
    earlier run fused apart (20 degrees from each, they 40 from each other, against cos 0.88 = 28 degrees) leaves
    one fusion node holding all five, and no item in two."""
    embedder = MarkerEmbedder({"xc01": at_cosine(1.0), "xe01": at_cosine(float(np.cos(np.radians(20)))),
                               "xd01": at_cosine(float(np.cos(np.radians(40))))})
    config = DistillConfig(fusion=True, fact_fusion=0.88, topic_fusion=0.999)
    load_passages(kb, tmp_path, {f"Doc {m}{i}": f"The sample x{m}01 {MEASURED}" for m in "cd" for i in (1, 2)},
                  "first")
    assert distill(kb, embedder, OfflineLLM(), layers=["pseudograph"],
                   config=config).layers["pseudograph"].created["SuperFact groups"] == 2
    load_passages(kb, tmp_path, {"Doc e": f"The sample xe01 {MEASURED}"}, "second")
    distill(kb, embedder, OfflineLLM(), layers=["pseudograph"], config=config)
    groups = kb.query("MATCH (s:SuperFact) OPTIONAL MATCH (s)-[:SIMILAR]->(f:FactItem) RETURN s.id AS s, count(f) AS n")
    assert [g["n"] for g in groups] == [5]
    assert count(kb, "MATCH (f:FactItem)<-[:SIMILAR]-(s:SuperFact) WITH f, count(s) AS k WHERE k > 1 "
                     "RETURN count(f) AS n") == 0


def test_a_group_found_again_by_a_later_slice_of_pending_nodes_counts_once(
        kb: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pseudograph, "_FUSION_SLICE", 1)  # each pending item its own slice: both find the pair
    embedder = MarkerEmbedder({"xp01": E0})
    load_passages(kb, tmp_path, {"Alpha": f"Sample xp01 {MEASURED}", "Beta": f"Sample xp01 {MEASURED}"})
    report = distill(kb, embedder, OfflineLLM(), layers=["pseudograph"],
                     config=DistillConfig(fusion=True, topic_fusion=0.999))
    assert report.layers["pseudograph"].created["SuperFact groups"] == 1
    assert count(kb, "MATCH (s:SuperFact)-[:SIMILAR]->(f:FactItem) RETURN count(f) AS n") == 2


def test_fusion_readers_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="fusion_readers must be at least 1, not 0"):
        DistillConfig(fusion_readers=0)


def test_names_meet_by_their_words_one_word_apart_at_most(kb: GraphStore) -> None:
    # A threshold of -1 lets every vector through: only the names' block keys and the n-gram guard decide.
    resolver = EntityResolver(kb, EMBEDDER, DistillConfig(entity_threshold=-1.0))
    write_entity(kb, "ent_clinton", "Bill Clinton", "Person")
    write_entity(kb, "ent_williams", "Williams", "Person")
    write_entity(kb, "ent_iannucci", "Armando Iannucci Shows", "Work")
    longer, reordered = ("President Bill Clinton", "Person"), ("Clinton, Bill", "Person")
    shorter, other_word = ("Armando Iannucci", "Work"), ("Armando Iannucci Hour", "Work")
    write_entity(kb, "ent_grammy", "Grammy Award", "Award")
    write_entity(kb, "ent_winter", "Winter", "Person")
    plural = ("Grammy Awards", "Award")
    out = resolver.resolve([longer, reordered, shorter, plural, ("Kenneth Williams", "Person"),
                            ("Williamson", "Person"), ("Winters", "Person")])
    assert out.ids[longer] == out.ids[reordered] == "ent_clinton"
    assert out.ids[shorter] == "ent_iannucci"
    assert out.ids[plural] == "ent_grammy"
    # Two words more, one word other, a longer word, or a lone word's plural: never the same entity by name alone.
    assert out.ids[("Kenneth Williams", "Person")] != "ent_williams" != out.ids[("Williamson", "Person")]
    assert out.ids[("Winters", "Person")] != "ent_winter"
    assert resolver.resolve([other_word]).ids[other_word] != "ent_iannucci"
    # Inside one batch the same rule: how mentions are batched does not change which merge.
    batch = [("Lake Geneva", "Place"), ("Geneva", "Place"), ("Lake Geneva Region", "Place"), ("Geneva Lake", "Place")]
    together = resolver.resolve(batch)
    assert together.ids[batch[0]] == together.ids[batch[2]] == together.ids[batch[3]] != together.ids[batch[1]]


def test_entities_written_before_block_keys_are_keyed_once(kb: GraphStore) -> None:
    write_entity(kb, "ent_obama", "Barack Obama", "Person")
    kb.query("MATCH (e:Entity) REMOVE e.block_keys", routing=RoutingControl.WRITE)
    kb.query("MATCH (m:StrataMeta) REMOVE m.entity_blocks", routing=RoutingControl.WRITE)
    mention = ("Barack H. Obama", "Person")
    resolver = EntityResolver(kb, EMBEDDER, DistillConfig(entity_threshold=-1.0))
    assert resolver.resolve([mention]).ids[mention] != "ent_obama"  # not found without its keys
    assert ensure_stored_keys(kb, ENTITY_BLOCKS) == 1
    assert resolver.resolve([mention]).ids[mention] == "ent_obama"
    assert kb.query("MATCH (m:StrataMeta) RETURN m.entity_blocks AS v")[0]["v"] == ENTITY_BLOCKS.version
    assert ensure_stored_keys(kb, ENTITY_BLOCKS) == 0


def test_resolution_reads_no_vector_index(kb: GraphStore) -> None:
    """The fuzzy step seeks block keys: an HNSW search's cost grew with the index's segments (docs/scaling.md)."""
    write_entity(kb, "ent_obama", "Barack Obama", "Person")
    recording = FailingStore(kb, fail_on="", times=0)  # fails nothing, lists every query it is asked
    mention = ("Barack H. Obama", "Person")
    out = EntityResolver(recording, EMBEDDER, DistillConfig(entity_threshold=-1.0)).resolve([mention])
    assert out.ids[mention] == "ent_obama"
    assert "distill/entities_by_blocks" in recording.calls
    assert not any("db.index.vector" in cypher.load(name) for name in recording.calls)


# -- 2. types ---------------------------------------------------------------------------------------------------


def test_a_generic_mention_never_bridges_two_specific_types(kb: GraphStore) -> None:
    # A threshold of -1 lets every vector through: only the type rules keep these apart.
    resolver = EntityResolver(kb, EMBEDDER, DistillConfig(entity_threshold=-1.0))
    fruit, org, generic = ("Apple", "Fruit"), ("Apple", "Organization"), ("Apple", "Entity")
    out = resolver.resolve([fruit, generic, org])
    assert len({out.ids[fruit], out.ids[org], out.ids[generic]}) == 3
    # Unambiguous: the generic mention joins the name's one specific type.
    out = resolver.resolve([fruit, ("apple", "Entity")])
    assert out.ids[fruit] == out.ids[("apple", "Entity")]
    assert [e.type for e in out.new] == ["Fruit"]


def test_specific_mentions_do_not_merge_through_an_existing_generic_entity(kb: GraphStore) -> None:
    resolver = EntityResolver(kb, EMBEDDER, DistillConfig(entity_threshold=-1.0))
    fruit, org, generic = ("Apple", "Fruit"), ("Apple", "Organization"), ("Apple", "Entity")
    write_entity(kb, "ent_generic", "Apple", "Entity")
    out = resolver.resolve([fruit, org])
    assert len({out.ids[fruit], out.ids[org], "ent_generic"}) == 3
    assert resolver.resolve([generic]).ids[generic] == "ent_generic"
    # Existing typed entities: a generic mention joins one if it is the only type of that name, else none.
    kb.query("MATCH (e:Entity) DETACH DELETE e", routing=RoutingControl.WRITE)
    write_entity(kb, "ent_fruit", "Apple", "Fruit")
    assert resolver.resolve([generic]).ids[generic] == "ent_fruit"
    write_entity(kb, "ent_org", "Apple", "Organization")
    out = resolver.resolve([generic])
    assert out.ids[generic] not in {"ent_fruit", "ent_org"} and [e.type for e in out.new] == ["Entity"]


# -- 3. fusion --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("candidates", [10, 2])
def test_fusion_reaches_other_documents_past_a_documents_own_items(kb: GraphStore, tmp_path: Path,
                                                                   candidates: int) -> None:
    # Twelve items of one document share more words (their topic's) and lie closer (cosine 0.96) to each other
    # than to the other document's item (0.88): a lookup of the best 2 x 2 or 2 x 10 candidates would return
    # only their own document's items, if it did not leave that document out.
    markers: dict[str, Any] = {f"xa{i:02d}": E0 + 0.2 * np.eye(EMBEDDER.dimensions)[i + 2] for i in range(12)}
    markers["xb00"] = at_cosine(0.90)
    embedder = MarkerEmbedder(markers)
    config = DistillConfig(fusion=True, fact_fusion=0.85, topic_fusion=0.99, fusion_candidates=candidates)
    [beta] = load_passages(kb, tmp_path, {"Beta": f"Sample xb00 {MEASURED}"}, "beta")
    assert distill(kb, embedder, OfflineLLM(), layers=["pseudograph"],
                   config=config).layers["pseudograph"].created["SuperFact groups"] == 0
    load_passages(kb, tmp_path, {"Alpha": " ".join(f"Sample xa{i:02d} {MEASURED}" for i in range(12))}, "alpha")
    report = distill(kb, embedder, OfflineLLM(), layers=["pseudograph"], config=config)
    assert report.layers["pseudograph"].created["FactItem"] == 12
    groups = kb.query("MATCH (s:SuperFact)-[:SIMILAR]->(f:FactItem) "
                      "RETURN s.id AS id, collect(f.document_id) AS docs")
    assert len(groups) == 1 and sorted(groups[0]["docs"]).count(beta) == 1 and len(groups[0]["docs"]) == 13


def test_topics_and_fact_items_fuse_by_their_keys_without_a_vector_search(kb: GraphStore, tmp_path: Path) -> None:
    """A topic or fact item finds its near duplicates by key lookups: an HNSW search per node grew with the index
    and its segments, and was most of offline distillation's time (docs/scaling.md)."""
    embedder = MarkerEmbedder({"xk01": E0})
    load_passages(kb, tmp_path, {"Alpha": f"Sample xk01 {MEASURED}", "Beta": f"Sample xk01 {MEASURED}"})
    distill(kb, embedder, OfflineLLM(), layers=["pseudograph"], config=DistillConfig(fusion=True, topic_fusion=0.999))
    kb.query("MATCH (s) WHERE s:SuperFact OR s:SuperTopic DETACH DELETE s", routing=RoutingControl.WRITE)
    kb.query("MATCH (x) WHERE x:FactItem OR x:Topic SET x.fusion_pending = true", routing=RoutingControl.WRITE)
    # The two documents' topics ("Alpha", "Beta") share no key: not fused, though the threshold is 0.
    for fusion, threshold, groups in ((pseudograph._TOPICS, 0.0, 0), (pseudograph._FACTS, 0.98, 1)):
        recording = FailingStore(kb, fail_on="", times=0)  # fails nothing, lists every query it is asked
        assert pseudograph.fuse(recording, fusion, threshold, DistillConfig()) == groups
        assert "distill/fusion_by_keys" in recording.calls
        assert not [name for name in recording.calls if "db.index.vector" in cypher.load(name)]


def test_fusion_is_off_by_default_and_a_later_fusing_run_fuses_what_waited(kb: GraphStore,
                                                                          tmp_path: Path) -> None:
    # Without fusion the layer writes no keys and no fusion node, and leaves its nodes pending; a fusing run
    # with no chunk left to distil keys and fuses them all, as one run with fusion would have.
    embedder = MarkerEmbedder({"xk04": E0})
    load_passages(kb, tmp_path, {"Alpha": f"Sample xk04 {MEASURED}", "Beta": f"Sample xk04 {MEASURED}"})
    report = distill(kb, embedder, OfflineLLM(), layers=["pseudograph"])
    assert report.layers["pseudograph"].created["FactItem"] > 0
    assert not any("groups" in name for name in report.layers["pseudograph"].created)
    assert count(kb, "MATCH (s) WHERE s:SuperFact OR s:SuperTopic RETURN count(s) AS n") == 0
    assert count(kb, "MATCH (x) WHERE (x:FactItem OR x:Topic) AND x.fusion_keys IS NOT NULL RETURN count(x) AS n") == 0
    waiting = count(kb, "MATCH (x) WHERE (x:FactItem OR x:Topic) AND x.fusion_pending RETURN count(x) AS n")
    assert waiting == count(kb, "MATCH (x) WHERE x:FactItem OR x:Topic RETURN count(x) AS n") > 0
    again = distill(kb, embedder, OfflineLLM(), layers=["pseudograph"],
                    config=DistillConfig(fusion=True, topic_fusion=0.999))
    assert again.layers["pseudograph"].chunks == 0
    assert again.layers["pseudograph"].created["SuperFact groups"] == 1
    assert count(kb, "MATCH (x) WHERE (x:FactItem OR x:Topic) AND (x.fusion_pending OR x.fusion_keys IS NULL) "
                     "RETURN count(x) AS n") == 0


def test_topics_of_the_same_words_fuse_across_documents(kb: GraphStore, tmp_path: Path) -> None:
    # Two documents of one title (their topics) in two files, a third of another: one group of the two.
    embedder = MarkerEmbedder({"xt01": E0})
    one = load_passages(kb, tmp_path, {"Harbour Bridge": f"Sample xt01 {MEASURED}",
                                       "Glacier Railway": f"Other xt01 {MEASURED}"}, "one")
    two = load_passages(kb, tmp_path, {"Harbour Bridge": f"Sample xt01 {MEASURED}"}, "two")
    report = distill(kb, embedder, OfflineLLM(), layers=["pseudograph"], config=DistillConfig(fusion=True))
    assert report.layers["pseudograph"].created["SuperTopic groups"] == 1
    groups = kb.query("MATCH (s:SuperTopic)-[:SIMILAR]->(t:Topic) RETURN collect(t.document_id) AS docs")
    assert sorted(groups[0]["docs"]) == sorted([one[0], two[0]])


def test_nodes_written_before_fusion_keys_are_keyed_once_and_then_fuse(kb: GraphStore, tmp_path: Path) -> None:
    embedder = MarkerEmbedder({"xk02": E0})
    load_passages(kb, tmp_path, {"Alpha": f"Sample xk02 {MEASURED}"}, "alpha")
    distill(kb, embedder, OfflineLLM(), layers=["pseudograph"])
    # As a graph distilled before fact items (and, later, topics) had keys holds them.
    kb.query("MATCH (x) WHERE x:FactItem OR x:Topic REMOVE x.fusion_keys", routing=RoutingControl.WRITE)
    kb.query("MATCH (m:StrataMeta) REMOVE m.factitem_fusion_keys, m.topic_fusion_keys", routing=RoutingControl.WRITE)
    load_passages(kb, tmp_path, {"Beta": f"Sample xk02 {MEASURED}"}, "beta")
    report = distill(kb, embedder, OfflineLLM(), layers=["pseudograph"],
                     config=DistillConfig(fusion=True, topic_fusion=0.999))
    assert report.layers["pseudograph"].created["SuperFact groups"] == 1
    assert count(kb, "MATCH (x) WHERE (x:FactItem OR x:Topic) AND x.fusion_keys IS NULL RETURN count(x) AS n") == 0
    versions = kb.query("MATCH (m:StrataMeta) RETURN m.factitem_fusion_keys AS f, m.topic_fusion_keys AS t")[0]
    assert versions == {"f": FACTITEM_KEYS.version, "t": TOPIC_KEYS.version}
    assert ensure_stored_keys(kb, FACTITEM_KEYS) == 0 and ensure_stored_keys(kb, TOPIC_KEYS) == 0


def test_a_fresh_graph_is_never_paged_for_missing_keys(kb: GraphStore, tmp_path: Path) -> None:
    # The key check runs before the run writes: on a graph with no entity or fact item yet, one empty page
    # and the versions are recorded; the entities and items the run then writes (with their keys) are never
    # paged through, as they were when fusion checked after the run's writes.
    embedder = MarkerEmbedder({"xk03": E0})
    load_passages(kb, tmp_path, {"Alpha": f"Sample xk03 {MEASURED}", "Beta": f"Sample xk03 {MEASURED}"})
    recording = FailingStore(kb, fail_on="", times=0)  # fails nothing, lists every query it is asked
    report = distill(recording, embedder, OfflineLLM(), layers=["triples", "pseudograph"],
                     config=DistillConfig(fusion=True))
    assert report.layers["pseudograph"].created["FactItem"] > 0 and report.layers["triples"].created["Entity"] > 0
    calls = recording.calls
    assert calls.count("distill/entity_texts_page") == 1
    assert calls.index("distill/entity_texts_page") < calls.index("distill/merge_entities")
    assert calls.count("distill/fusion_texts_page") == 2  # topics, fact items
    last_page = max(i for i, c in enumerate(calls) if c == "distill/fusion_texts_page")
    assert last_page < calls.index("distill/create_topics")
    versions = kb.query("MATCH (m:StrataMeta) "
                        "RETURN m.factitem_fusion_keys AS f, m.topic_fusion_keys AS t, m.entity_blocks AS e")[0]
    assert versions == {"f": FACTITEM_KEYS.version, "t": TOPIC_KEYS.version, "e": ENTITY_BLOCKS.version}


FUSING = DistillConfig(fusion=True)


def test_failed_fusion_is_retried_by_the_next_run(kb: GraphStore, tmp_path: Path) -> None:
    embedder = MarkerEmbedder({"xs01": E0})
    load_passages(kb, tmp_path, {"Alpha": f"Sample xs01 {MEASURED}", "Beta": f"Sample xs01 {MEASURED}"})

    # The fusion's unit of work fails at its last query, after its SuperFact write ran in the same transaction.
    failing = FailingStore(kb, "distill/fusion_done", error=RuntimeError("injected fusion failure"))
    with pytest.raises(RuntimeError, match="injected"):
        distill(failing, embedder, OfflineLLM(), layers=["pseudograph"], config=FUSING)
    assert failing.failures == 1
    # The mind maps committed; their fusion did not (the whole unit rolled back), and stays pending.
    assert count(kb, "MATCH (c:Chunk) WHERE 'pseudograph' IN c.distilled RETURN count(c) AS n") == 2
    assert count(kb, "MATCH (f:FactItem {fusion_pending: true}) RETURN count(f) AS n") == 2
    assert count(kb, "MATCH (s:SuperFact) RETURN count(s) AS n") == 0
    report = distill(kb, embedder, OfflineLLM(), layers=["pseudograph"], config=FUSING)
    entry = report.layers["pseudograph"]
    assert entry.pending == 0 and entry.created["SuperFact groups"] == 1
    assert count(kb, "MATCH (:SuperFact)-[:SIMILAR]->(f:FactItem) RETURN count(f) AS n") == 2
    assert count(kb, "MATCH (n) WHERE n.fusion_pending RETURN count(n) AS n") == 0
    again = distill(kb, embedder, OfflineLLM(), layers=["pseudograph"], config=FUSING)
    assert again.layers["pseudograph"].created["SuperFact groups"] == 0


# -- 4, 5. route embeddings, provenance to chunk, page and document ---------------------------------------------

PAGES = [("Morning radio", ["Bob Edwards hosted Morning Edition on National Public Radio.",
                            "He hosted it from 1979 to 2004."]),
         ("Later hosts", ["Renee Montagne co-hosted Morning Edition from 2004.", "She left the show in 2016."])]


def _triples(text: str) -> dict[str, Any]:
    chunk = section(text, "Text:")
    found = [("Bob Edwards", "Person", "hosted", "Morning Edition", "Show")] if "Edwards" in chunk else []
    if "Montagne" in chunk:
        found.append(("Renee Montagne", "Person", "co_hosted", "Morning Edition", "Show"))
    return {"triples": [dict(zip(("head", "head_type", "relation", "tail", "tail_type"), t, strict=True))
                        for t in found]}


def _fact_items(text: str) -> dict[str, Any]:
    chunk = section(text, "Text:")
    return {"items": [{"topic": "t", "fact": line} for _, lines in PAGES for line in lines if line in chunk]}


PROVENANCE = {
    "Atom": "(x)-[:ATOM_OF]->(c)", "Fact": "(x)-[:FACT_OF]->(c)", "Entity": "(c)-[:MENTIONS]->(x)",
    "FactItem": "(x)-[:ITEM_OF]->(c)", "Topic": "(x)-[:ITEM_OF]->(c)", "Route": "(x)-[:ITEM_OF]->(c)",
}


def test_every_distilled_node_reaches_its_chunk_page_and_document(
        kb: GraphStore, tmp_path: Path, responder: Responder, llm: OpenAICompatibleLLM) -> None:
    responder.tasks.update({
        "fact_items": _fact_items,
        "mind_map": lambda _t: {"topic": "Radio", "branches": [{"label": "Hosts", "children": []}]},
    })
    script_shared_call(responder, _triples)  # atoms and triples chosen together: one call per chunk
    doc = load_pdf(kb, tmp_path / "radio.pdf", "Radio hosts", PAGES)
    report = distill(kb, EMBEDDER, llm, layers=["atoms", "triples", "pseudograph"])
    assert report.failed == 0
    for label, edge in PROVENANCE.items():
        rows = kb.query(f"MATCH (x:{label}) OPTIONAL MATCH {edge} "
                        "OPTIONAL MATCH (c)<-[:HAS_CHUNK]-(:Section)<-[:HAS_SECTION*]-(d:Document) "
                        "WHERE coalesce(x.document_id, d.id) = d.id "
                        "RETURN x.id AS id, coalesce(x.text, x.name) AS text, "
                        "collect(DISTINCT c.page) AS pages, collect(DISTINCT d.id) AS docs")
        assert rows, label
        for row in rows:
            assert row["docs"] == [doc] and row["pages"], (label, row)
            if "Montagne" in row["text"]:
                assert row["pages"] == [2], (label, row)
            elif "Edwards" in row["text"]:
                assert row["pages"] == [1], (label, row)
    # The topic and its one route came from both pages.
    for label in ("Topic", "Route"):
        pages = kb.query(f"MATCH (x:{label})-[:ITEM_OF]->(c:Chunk) RETURN collect(DISTINCT c.page) AS p")[0]["p"]
        assert sorted(pages) == [1, 2], label
    # Routes are embedded on their path text, like topics and fact items.
    top = kb.query("MATCH (r:Route) RETURN r.path_text AS path, vector.similarity.cosine(r.embedding, $v) AS score "
                   "ORDER BY score DESC", v=EMBEDDER.embed_one("Radio > Hosts").tolist())
    assert top[0]["path"] == "Radio > Hosts" and top[0]["score"] > 0.99
