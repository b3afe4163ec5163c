"""Common terms (kg.retrieval.common_terms): the query they make, their estimate on the real Neo4j, when it is
taken again, and what the full-text paths return with them."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from kg.errors import RetrievalError
from kg.retrieval import make_retriever, method_settings
from kg.retrieval.common_terms import CommonTermRule, CommonTerms, shared_common_terms
from kg.retrieval.methods.fulltext import fulltext_hits
from kg.store.base import GraphStore
from kg.store.lucene import lucene_query, text_terms
from tests.retrieval.conftest import EMBEDDER, Corpus, load_passages


def test_a_query_with_rare_and_common_terms_requires_a_rare_one() -> None:
    common = {"river", "place"}
    assert lucene_query("The river near Place 12 and Place 7", common=common) == "+(near 12 7) river place"
    assert lucene_query("river place", common=common) == "river place"  # common terms only: the plain OR
    assert lucene_query("Hudson valley", common=common) == "hudson valley"  # no common term
    assert lucene_query("the of", common=common) == ""


def test_text_terms_are_the_words_a_query_could_hold() -> None:
    assert text_terms("Beatrice's film, FILM of 1985") == {"beatrice", "film", "of", "1985"}
    assert text_terms("x" * 65 + " short") == {"short"}  # an over-long word is never a query term


def test_the_rule_is_a_validated_setting_of_the_lexical_methods() -> None:
    assert method_settings("strata", common_terms={"ratio": 0.1}).common_terms == CommonTermRule(ratio=0.1)
    assert method_settings("fulltext", common_terms=None).common_terms is None
    with pytest.raises(RetrievalError, match="common_terms"):
        method_settings("hybrid", common_terms={"ratio": 2.0})


def test_a_store_without_weak_references_gets_an_estimate_of_its_own() -> None:
    store = cast(GraphStore, object())  # nothing is read before the first query
    first, second = shared_common_terms(store, CommonTermRule()), shared_common_terms(store, CommonTermRule())
    assert first.store is store and first is not second


def _passages(count: int, start: int = 0) -> dict[str, str]:
    """Passages all holding 'harbour', every other one 'castle', every one a word of its own."""
    return {f"Passage {i}": f"The harbour {'castle ' if i % 2 == 0 else ''}holds word{i}."
            for i in range(start, start + count)}


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_common_terms_are_estimated_from_the_store(store: GraphStore, tmp_path: Path) -> None:
    load_passages(store, tmp_path, _passages(40))
    exact = CommonTerms(store, CommonTermRule(ratio=0.3, min_chunks=10))
    # In every passage: "harbour", its title's "passage", and the stopword "the" (never a query term anyway).
    assert exact.terms() == {"harbour", "castle", "passage", "the", "holds"}
    assert CommonTerms(store, CommonTermRule(ratio=0.6, min_chunks=10)).terms() == {"harbour", "passage", "the",
                                                                                   "holds"}
    # More chunks than the sample: windows from points of the id space, still every word in all of them.
    sampled = CommonTerms(store, CommonTermRule(ratio=0.6, min_chunks=10, sample=16)).terms()
    assert {"harbour", "passage"} <= sampled and not any(t.startswith("word") for t in sampled)
    # A store of no more chunks than min_chunks has no common term: its postings are short.
    assert CommonTerms(store, CommonTermRule(ratio=0.3, min_chunks=40)).terms() == frozenset()
    assert CommonTerms(store, None).terms() == frozenset()


def test_the_estimate_is_taken_again_when_the_store_has_grown(store: GraphStore, tmp_path: Path) -> None:
    load_passages(store, tmp_path, _passages(20))
    clock = _Clock()
    terms = CommonTerms(store, CommonTermRule(ratio=0.3, min_chunks=5, refresh_s=30.0), clock=clock)
    assert "castle" in terms.terms()
    # Twenty passages without "castle": half as common, under the ratio, once the store is looked at again.
    (tmp_path / "more").mkdir()
    load_passages(store, tmp_path / "more", {f"Other {i}": f"The harbour holds other{i}." for i in range(40)})
    clock.now = 29.0
    assert "castle" in terms.terms()  # not due yet
    clock.now = 31.0
    assert "castle" not in terms.terms() and "harbour" in terms.terms()


@pytest.fixture
def harbours(store: GraphStore, tmp_path: Path) -> Corpus:
    passages = _passages(30)
    passages["Castle Rock"] = "The castle harbour castle harbour of Castle Rock holds a lighthouse."
    return load_passages(store, tmp_path, passages)


def test_fulltext_with_common_terms_keeps_the_ranking_of_the_passages_with_a_rare_term(harbours: Corpus) -> None:
    common = CommonTerms(harbours.store, CommonTermRule(ratio=0.3, min_chunks=10)).terms()
    question = "harbour castle lighthouse"
    plain = fulltext_hits(harbours.store, question, k=10)
    led = fulltext_hits(harbours.store, question, k=10, common=common)
    # The plain OR scores every passage; led by "lighthouse", only the one holding it, with the same score.
    assert len(plain) == 10 and [h.title for h in led] == ["Castle Rock"]
    assert plain[0].title == "Castle Rock" and led[0].score == pytest.approx(plain[0].score)


def test_retrievers_lead_their_lucene_paths_by_rare_terms(harbours: Corpus) -> None:
    rule = CommonTermRule(ratio=0.3, min_chunks=10)
    for method in ("fulltext", "hybrid", "strata"):
        led = make_retriever(method, harbours.store, EMBEDDER, common_terms=rule).retrieve("harbour lighthouse", k=5)
        plain = make_retriever(method, harbours.store, EMBEDDER, common_terms=None).retrieve("harbour lighthouse",
                                                                                               k=5)
        assert led[0].title == plain[0].title == "Castle Rock", method
        lexical = {s.path for h in led[1:] for s in h.sources} & {"fulltext", "fulltext_atom"}
        assert not lexical, f"{method}: a passage without 'lighthouse' came through a Lucene path"


def test_retrievers_of_one_store_share_its_estimate(harbours: Corpus) -> None:
    rule = CommonTermRule(ratio=0.3, min_chunks=10)
    first = make_retriever("strata", harbours.store, EMBEDDER, common_terms=rule)
    assert first.common_terms is make_retriever("fulltext", harbours.store, EMBEDDER, common_terms=rule).common_terms
    assert first.common_terms is not make_retriever("strata", harbours.store, EMBEDDER).common_terms  # another rule
