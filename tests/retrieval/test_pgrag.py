"""PG-RAG's walk on constructed mind-map rows, and the retriever on a mind map written to Neo4j."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from neo4j import RoutingControl

from kg.embeddings import Embedder
from kg.retrieval import make_retriever
from kg.retrieval.methods.pgrag import FactPath, PGRAGRetriever, render_mind_map, upper_index, walk
from tests.retrieval.conftest import EMBEDDER, Corpus

#            T
#      R1          R2
#   F1    F2       F3
ROWS = [["T", "R1", "F1"], ["T", "R1", "F2"], ["T", "R2", "F3"]]


def test_walk_goes_up_while_supported_then_colours_rows_below() -> None:
    sims = {"T": 0.20, "R1": 0.79, "R2": 0.10, "F1": 0.80, "F2": 0.78, "F3": 0.30}
    assert upper_index(ROWS[0], sims, support=0.03, ambiguity=0.05) == 1  # R1 supports F1; T does not
    totals = walk(ROWS, sims, ["F1"])
    assert totals[0] == 0.79 + 0.80
    assert totals[1] == 0.79 + 0.78  # F2 is within the support threshold of the anchor
    assert totals[2] == 0.0  # not under R1


def test_ambiguous_nodes_count_half_and_rejected_nodes_stop_the_row() -> None:
    sims = {"T": 0.20, "R1": 0.76, "R2": 0.10, "F1": 0.80, "F2": 0.50, "F3": 0.30}
    totals = walk(ROWS, sims, ["F1"])
    assert totals[0] == 0.5 * 0.76 + 0.80  # R1 is ambiguous (diff 0.04)
    assert totals[1] == 0.5 * 0.76  # F2 is rejected: the row stops before it


def test_anchors_aggregate() -> None:
    sims = {"T": 0.79, "R1": 0.79, "R2": 0.79, "F1": 0.80, "F2": 0.10, "F3": 0.80}
    totals = walk(ROWS, sims, ["F1", "F3"])
    assert upper_index(ROWS[2], sims, support=0.03, ambiguity=0.05) == 0
    # Both anchors climb to the root, so each colours every row; F2 is rejected on its row.
    assert totals == pytest.approx([2 * (0.79 + 0.79 + 0.80), 2 * (0.79 + 0.79), 2 * (0.79 + 0.79 + 0.80)])
    assert walk(ROWS, sims, ["missing"]) == [0.0, 0.0, 0.0]


def test_render_mind_map_prints_shared_prefixes_once() -> None:
    paths = [FactPath(["T", "R1", "F1"], ["Topic", "Route", "fact one"], "c"),
             FactPath(["T", "R1", "F2"], ["Topic", "Route", "fact two"], "c")]
    assert render_mind_map(paths) == "- Topic\n  - Route\n    - fact one\n    - fact two"


def _mind_map(corpus: Corpus) -> None:
    doc, chunk = corpus.documents["Arthur's Magazine"], corpus.chunks["Arthur's Magazine"]
    items = [("i1", "r1", "published in Philadelphia"), ("i2", "r1", "edited by Timothy Shay Arthur"),
             ("i3", "r2", "literary periodical of American fiction")]
    corpus.store.query(
        "MATCH (c:Chunk {id: $chunk}) "
        "CREATE (t:Topic {id: 't1', document_id: $doc, text: $topic})-[:TOPIC_OF]->(:Document {id: 'unused'}) "
        "CREATE (t)-[:HAS_ROUTE]->(:Route {id: 'r1', document_id: $doc, text: 'publication', "
        "  path_text: $topic + ' publication'}) "
        "CREATE (t)-[:HAS_ROUTE]->(:Route {id: 'r2', document_id: $doc, text: 'genre', path_text: $topic + ' genre'}) "
        "WITH c, t CALL db.create.setNodeVectorProperty(t, 'embedding', $topic_vec) "
        "WITH c UNWIND $items AS item MATCH (r:Route {id: item.route}) "
        "CREATE (r)-[:HAS_ITEM]->(f:FactItem {id: item.id, document_id: $doc, text: item.text, "
        "  path_text: item.text})-[:ITEM_OF]->(c) "
        "WITH f, item CALL db.create.setNodeVectorProperty(f, 'embedding', item.vec)",
        routing=RoutingControl.WRITE, chunk=chunk, doc=doc, topic="Arthur's Magazine",
        topic_vec=[float(x) for x in EMBEDDER.embed_one("Arthur's Magazine")],
        items=[{"id": i, "route": r, "text": t, "vec": [float(x) for x in EMBEDDER.embed_one(t)]} for i, r, t in items])


def test_pgrag_walk_returns_a_mind_map_context_and_chunk_hits(corpus: Corpus) -> None:
    _mind_map(corpus)
    retriever = PGRAGRetriever(corpus.store, EMBEDDER, anchors=1, support=1.0, ambiguity=1.0)
    context = retriever.retrieve_mind_map("Where was the magazine published?", k=3)
    assert context.key_points == ["Where was the magazine published?"]  # offline: the question itself
    assert context.paths[0].ids == ["t1", "r1", "i1"]
    assert "- Arthur's Magazine\n  - publication\n    - published in Philadelphia" in context.text
    hits = make_retriever("pgrag", corpus.store, EMBEDDER, anchors=1).retrieve("Where was the magazine published?")
    assert [h.title for h in hits] == ["Arthur's Magazine"]
    assert hits[0].sources[0].via is not None and hits[0].sources[0].via.endswith("published in Philadelphia")


class CountingEmbedder(Embedder):
    """The test embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        self.name, self.dimensions, self.texts = EMBEDDER.name, EMBEDDER.dimensions, 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts += len(texts)
        return EMBEDDER.embed(texts)


def test_the_walk_scores_topics_and_routes_by_their_stored_vectors(corpus: Corpus) -> None:
    _mind_map(corpus)  # its routes are stored without vectors, as routes of older graphs are
    question = "Where was the magazine published?"
    counting = CountingEmbedder()
    before = PGRAGRetriever(corpus.store, counting, anchors=1, support=1.0, ambiguity=1.0).retrieve_mind_map(question)
    assert counting.texts == 3  # the question, then each route's path text
    corpus.store.query("MATCH (r:Route) CALL db.create.setNodeVectorProperty(r, 'embedding', "
                       "CASE r.id WHEN 'r1' THEN $r1 ELSE $r2 END)", routing=RoutingControl.WRITE,
                       r1=[float(x) for x in EMBEDDER.embed_one("Arthur's Magazine publication")],
                       r2=[float(x) for x in EMBEDDER.embed_one("Arthur's Magazine genre")])
    counting.texts = 0
    after = PGRAGRetriever(corpus.store, counting, anchors=1, support=1.0, ambiguity=1.0).retrieve_mind_map(question)
    assert counting.texts == 1  # the question only
    assert [p.ids for p in after.paths] == [p.ids for p in before.paths]
    assert [p.score for p in after.paths] == pytest.approx([p.score for p in before.paths])


def test_pgrag_without_mind_maps_finds_nothing(corpus: Corpus) -> None:
    assert make_retriever("pgrag", corpus.store, EMBEDDER).retrieve("anything") == []


ALL_ITEMS = "published in Philadelphia, edited by Timothy Shay Arthur, literary periodical of American fiction"


def test_pgrag_anchors_scale_with_k(corpus: Corpus) -> None:
    _mind_map(corpus)
    # A tiny support threshold keeps each anchor's walk on its own row, so paths count anchors.
    retriever = PGRAGRetriever(corpus.store, EMBEDDER, anchors=1, support=1e-9, ambiguity=1e-9)
    assert len(retriever.retrieve_mind_map(ALL_ITEMS, k=1).paths) == 1
    assert len(retriever.retrieve_mind_map(ALL_ITEMS, k=3).paths) == 3


def test_pgrag_respects_filters(corpus: Corpus) -> None:
    from kg.retrieval import RetrievalFilter

    _mind_map(corpus)
    corpus.store.query("MATCH (d:Document) SET d.metadata = CASE d.title WHEN $title THEN ['team=a'] "
                       "ELSE ['team=b'] END", routing=RoutingControl.WRITE, title="Arthur's Magazine")
    pgrag = make_retriever("pgrag", corpus.store, EMBEDDER)
    assert pgrag.retrieve(ALL_ITEMS, k=3, where=RetrievalFilter(metadata=["team=a"]))
    assert pgrag.retrieve(ALL_ITEMS, k=3, where=RetrievalFilter(metadata=["team=b"])) == []
    assert pgrag.retrieve(ALL_ITEMS, k=3, where=RetrievalFilter(formats=["pdf"])) == []
    chunk = corpus.chunks["Arthur's Magazine"]
    assert pgrag.retrieve(ALL_ITEMS, k=3, where=RetrievalFilter(exclude_chunk_ids=[chunk])) == []
