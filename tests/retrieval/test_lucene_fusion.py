"""Lucene escaping of hostile input (pure and against the real full-text index) and fusion maths."""

from __future__ import annotations

import pytest

from kg.retrieval.fusion import fuse, linear, rrf
from kg.retrieval.methods.fulltext import fulltext_hits
from kg.store.lucene import escape_lucene, lucene_query, name_query
from tests.retrieval.conftest import Corpus

HOSTILE = 'AND OR "( ) : ~ ^ \\ /'


def test_escape_lucene_escapes_every_special_character_and_disarms_operators() -> None:
    assert escape_lucene(HOSTILE) == 'and or \\"\\( \\) \\: \\~ \\^ \\\\ \\/'
    assert escape_lucene("a && b || !c [d] {e} *f? +g -h") == "a \\&\\& b \\|\\| \\!c \\[d\\] \\{e\\} \\*f\\? \\+g \\-h"
    assert escape_lucene("NOT TO be") == "not to be"


def test_lucene_query_keeps_content_terms_only() -> None:
    assert lucene_query(HOSTILE) == ""
    assert lucene_query("Who wrote C++ (1985)? Who wrote") == "wrote c 1985"
    assert lucene_query("a b c d", max_terms=2) == "b c"


def test_lucene_query_leaves_out_the_clitics_after_an_apostrophe() -> None:
    assert lucene_query("When is the director of film Beatrice's birthday?") == "director film beatrice birthday"
    assert lucene_query("Who isn\u2019t O'Brien's heir? We'll see") == "isn o brien heir see"
    assert lucene_query("S. Webb and Sam's") == "s webb sam"


def test_name_query_keeps_words_that_can_be_part_of_a_name() -> None:
    text = "The ship C++ sailed from Hamburg in 1889 to 北京 and the Hudson river; iPhone, not phone. The"
    assert name_query(text) == "c hamburg 1889 北京 hudson iphone"
    assert name_query("all lower case words") == ""
    assert name_query("Alpha Beta Gamma", max_terms=2) == "alpha beta"


@pytest.mark.parametrize("text", [HOSTILE, 'Hudson) AND (River OR "', "title:Hudson~2^3 /river/", "\\", "*"])
def test_hostile_text_never_breaks_the_index_query(corpus: Corpus, text: str) -> None:
    hits = fulltext_hits(corpus.store, text, k=3)
    if "Hudson" in text:
        assert hits[0].title == "Newburgh"
    else:
        assert hits == []


def test_rrf_on_known_ranks() -> None:
    fused = rrf({"a": ["x", "y", "z"], "b": ["z", "x"]}, k=60)
    assert fused["x"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["y"] == pytest.approx(1 / 62)
    assert fused["z"] == pytest.approx(1 / 63 + 1 / 61)
    weighted = rrf({"a": ["x"], "b": ["x"]}, k=0, weights={"a": 2.0, "b": 0.5})
    assert weighted["x"] == pytest.approx(2.5)


def test_linear_normalises_each_path() -> None:
    fused = linear({"vec": [("x", 0.9), ("y", 0.5), ("z", 0.1)], "bm25": [("y", 12.0), ("z", 4.0)]})
    assert fused == pytest.approx({"x": 1.0, "y": 0.5 + 1.0, "z": 0.0})
    assert linear({"one": [("x", 3.0)]}, weights={"one": 0.5}) == {"x": 0.5}


def test_fuse_orders_best_first_with_ties_by_id() -> None:
    assert fuse({"a": [("b", 1.0), ("a", 0.5)], "c": [("a", 1.0), ("b", 0.5)]}) == [
        ("a", pytest.approx(1 / 61 + 1 / 62)), ("b", pytest.approx(1 / 61 + 1 / 62))]
    assert [i for i, _ in fuse({"p": [("x", 2.0), ("y", 1.0)]}, method="linear")] == ["x", "y"]
