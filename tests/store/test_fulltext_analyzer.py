"""The language full-text indexes take the knowledge base's analyzer (``STRATA_FULLTEXT_ANALYZER``): set, it
rebuilds indexes built with another; unset, the graph keeps what it has; unknown, it is refused by name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neo4j import RoutingControl

from kg.embeddings import HashingEmbedder
from kg.errors import ConfigError
from kg.settings import Settings
from kg.store.base import GraphStore
from kg.store.queries import FULLTEXT_INDEX_ANALYZERS
from kg.store.schema import ANALYZED_INDEXES, DEFAULT_ANALYZER, ensure_schema

EMBEDDER = HashingEmbedder(64)


def analyzers(store: GraphStore) -> dict[str, str | None]:
    return {r["name"]: r["analyzer"] for r in store.read(FULLTEXT_INDEX_ANALYZERS, names=list(ANALYZED_INDEXES))}


def chunks_matching(store: GraphStore, query: str) -> list[str]:
    store.write("meta/await_fulltext")
    rows = store.query("CALL db.index.fulltext.queryNodes('chunk_text', $q) YIELD node RETURN node.id AS id "
                       "ORDER BY id", q=query)
    return [r["id"] for r in rows]


@pytest.fixture
def schema(store: GraphStore) -> Iterator[GraphStore]:
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions, analyzer=DEFAULT_ANALYZER)
    yield store
    # The suite's other tests run on the default analyzer.
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions, analyzer=DEFAULT_ANALYZER)


def test_a_cjk_knowledge_base_matches_chinese_words_not_single_characters(schema: GraphStore) -> None:
    schema.query("UNWIND $rows AS r CREATE (:Chunk {id: r.id, text: r.text, title: ''})",
                 rows=[{"id": "beijing", "text": "北京大学位于海淀区。"},
                       {"id": "reversed", "text": "京北的大学很多。"}],
                 routing=RoutingControl.WRITE)
    # The default analyzer indexes CJK text by single characters: 北京 matches 京北 too.
    assert chunks_matching(schema, "北京") == ["beijing", "reversed"]
    ensure_schema(schema, EMBEDDER.name, EMBEDDER.dimensions, analyzer="cjk")
    assert analyzers(schema) == {name: "cjk" for name in ANALYZED_INDEXES}
    assert chunks_matching(schema, "北京") == ["beijing"]  # the bigram, re-indexed from the stored chunks
    # Unset, the graph keeps what it was built with.
    ensure_schema(schema, EMBEDDER.name, EMBEDDER.dimensions)
    assert analyzers(schema) == {name: "cjk" for name in ANALYZED_INDEXES}


def test_an_english_knowledge_base_stems(schema: GraphStore) -> None:
    schema.query("CREATE (:Chunk {id: 'c1', text: 'The valves were inspected twice.', title: ''})",
                 routing=RoutingControl.WRITE)
    assert chunks_matching(schema, "inspecting") == []
    ensure_schema(schema, EMBEDDER.name, EMBEDDER.dimensions, analyzer="english")
    assert chunks_matching(schema, "inspecting") == ["c1"]


def test_an_unknown_analyzer_is_refused_by_name(schema: GraphStore) -> None:
    with pytest.raises(ConfigError, match=r"'klingon'.*STRATA_FULLTEXT_ANALYZER"):
        ensure_schema(schema, EMBEDDER.name, EMBEDDER.dimensions, analyzer="klingon")
    assert analyzers(schema) == {name: DEFAULT_ANALYZER for name in ANALYZED_INDEXES}


def test_the_analyzer_is_read_once_at_the_edge() -> None:
    assert Settings.from_env({"STRATA_FULLTEXT_ANALYZER": "english"}).fulltext_analyzer == "english"
    assert Settings.from_env({}).fulltext_analyzer is None
