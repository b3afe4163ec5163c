"""Each cypher/retrieval query on the real Neo4j: vector, atom, full-text, hybrid, multi-granularity,
title and entity links, filters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kg.errors import RetrievalError
from kg.retrieval import Hit, RetrievalFilter, atom_candidates, make_retriever
from kg.retrieval.common import graph_has, hits_by_id, query_vector
from kg.retrieval.fusion import fuse
from kg.retrieval.links import mentions_title, named_links, title_links
from kg.retrieval.methods.chunk import chunk_vector_hits
from kg.retrieval.methods.fulltext import fulltext_hits, fulltext_paths
from kg.retrieval.methods.hybrid import DEFAULT_WEIGHTS, hybrid_hits, hybrid_hits_with_links
from kg.shared.text import title_core
from kg.store.base import GraphStore
from kg.store.lucene import name_query
from tests.retrieval.conftest import EMBEDDER, PASSAGES, WRITE, Corpus, add_facts, load_passages


def test_chunk_vector_ranks_the_matching_chunk_first_with_cosine_scores(corpus: Corpus) -> None:
    hits = make_retriever("chunk", corpus.store, EMBEDDER).retrieve("port city in northern Germany Elbe", k=3)
    assert hits[0].title == "Hamburg"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(-1.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].sources[0].path == "chunk"
    assert hits[0].source is not None and hits[0].source.startswith("eval:")
    assert hits[0].sentences == [0]


@pytest.mark.parametrize("method", ["chunk", "atom"])
def test_vector_paths_score_by_the_exact_cosine_not_the_quantized_index(distilled: Corpus, method: str) -> None:
    # Neo4j 5.26 quantizes vector indexes by default and its search score is computed on the quantized
    # vectors; a score must be the cosine of the stored vectors, or thresholds and near ties come out wrong.
    question = "Which port city lies on the Elbe in northern Germany?"
    vector = np.asarray(query_vector(EMBEDDER, question))
    hits = make_retriever(method, distilled.store, EMBEDDER).retrieve(question, k=5)
    label = "Chunk" if method == "chunk" else "Atom"
    ids = [h.chunk_id if method == "chunk" else h.sources[0].via_id for h in hits]
    stored = {r["id"]: np.asarray(r["embedding"]) for r in distilled.store.query(
        f"MATCH (n:{label}) WHERE n.id IN $ids RETURN n.id AS id, n.embedding AS embedding", ids=ids)}
    assert len(hits) >= 3 and len(stored) == len(set(ids))
    for hit, node in zip(hits, ids, strict=True):
        exact = float(stored[node] @ vector / (np.linalg.norm(stored[node]) * np.linalg.norm(vector)))
        assert hit.score == pytest.approx(exact, abs=1e-5)


def test_chunk_vector_threshold_and_filters(corpus: Corpus) -> None:
    vector = query_vector(EMBEDDER, "port city in northern Germany Elbe")
    assert chunk_vector_hits(corpus.store, vector, k=5, threshold=0.99) == []
    only = chunk_vector_hits(corpus.store, vector, k=5,
                             where=RetrievalFilter(document_ids=[corpus.documents["Newburgh"]]))
    assert [h.title for h in only] == ["Newburgh"]
    skipped = chunk_vector_hits(corpus.store, vector, k=5,
                                where=RetrievalFilter(exclude_chunk_ids=[corpus.chunks["Hamburg"]]))
    assert "Hamburg" not in {h.title for h in skipped}
    assert chunk_vector_hits(corpus.store, vector, k=5, where=RetrievalFilter(formats=["pdf"])) == []
    assert len(chunk_vector_hits(corpus.store, vector, k=5, where=RetrievalFilter(formats=["corpus"]))) == 5


def test_atom_path_keeps_the_best_atom_per_chunk_as_explanation(distilled: Corpus) -> None:
    hits = make_retriever("atom", distilled.store, EMBEDDER).retrieve("Who was born in Newburgh?", k=3)
    assert hits[0].title == "Timothy Shay Arthur"
    assert hits[0].sources[0].via == "He was born in Newburgh."
    assert len({h.chunk_id for h in hits}) == len(hits)


def test_atom_threshold_filters_weak_atoms(distilled: Corpus) -> None:
    assert make_retriever("atom", distilled.store, EMBEDDER, threshold=0.999).retrieve("born Newburgh", k=3) == []


def test_atom_candidates_one_row_per_atom_excluding_context(distilled: Corpus) -> None:
    found = atom_candidates(distilled.store, EMBEDDER, "magazine published", k=4, threshold=0.0,
                            exclude_chunk_ids=[distilled.chunks["First for Women"]])
    assert found and len({c.atom_id for c in found}) == len(found)
    assert all(c.hit.title != "First for Women" for c in found)
    assert all(c.atom_id.startswith(c.hit.chunk_id) for c in found)


def test_atom_candidates_fall_back_to_chunks_without_atoms(corpus: Corpus) -> None:
    assert not graph_has(corpus.store, "Atom")
    found = atom_candidates(corpus.store, EMBEDDER, "port city Elbe", k=2, threshold=0.0, exclude_chunk_ids=[])
    assert found[0].hit.title == "Hamburg" and found[0].atom_id == found[0].hit.chunk_id


def test_fulltext_over_chunks_and_atoms(distilled: Corpus) -> None:
    chunks = fulltext_hits(distilled.store, "Hudson river", k=3)
    assert chunks[0].title == "Newburgh" and chunks[0].sources[0].path == "fulltext"
    atoms = fulltext_hits(distilled.store, "Hudson river", k=3, layer="atoms")
    assert atoms[0].title == "Newburgh" and atoms[0].sources[0].via == "It lies on the Hudson River."
    fused = make_retriever("fulltext", distilled.store, EMBEDDER).retrieve("Hudson river", k=3)
    assert fused[0].title == "Newburgh" and {s.path for s in fused[0].sources} == {"fulltext", "fulltext_atom"}


def _ranked(hits: list[Hit]) -> list[tuple[str, float, str | None]]:
    return [(h.chunk_id, round(h.score, 6), h.sources[0].via_id) for h in hits]


@pytest.mark.parametrize("question", ["Hudson river", "magazine started 1989", "port city Elbe Germany"])
def test_fulltext_paths_at_once_give_what_each_gives_alone(distilled: Corpus, question: str) -> None:
    # The two Lucene paths run as concurrent inner transactions of one query; each layer's hits must be what
    # that layer's path gives on its own, in the same order with the same scores and atoms.
    both = fulltext_paths(distilled.store, question, k=4)
    for layer in ("chunks", "atoms"):
        assert both[layer], layer
        assert _ranked(both[layer]) == _ranked(fulltext_hits(distilled.store, question, k=4, layer=layer))
    assert {h.sources[0].path for h in both["atoms"]} == {"fulltext_atom"}
    assert fulltext_paths(distilled.store, "", k=4) == {"chunks": [], "atoms": []}  # no terms: no index call


@pytest.mark.parametrize("method", ["zscore", "rrf", "linear"])
def test_hybrid_cypher_fusion_equals_python_fusion(distilled: Corpus, method: str) -> None:
    question = "Which magazine was started in 1989?"
    vector = query_vector(EMBEDDER, question)
    hits = hybrid_hits(distilled.store, vector, question, k=6, fusion=method, candidates=6)
    per_path: dict[str, list[tuple[str, float]]] = {}
    for hit in hits:
        for source in hit.sources:
            per_path.setdefault(source.path, []).append((hit.chunk_id, source.score))
    # Each path's full list (all 6 chunks exist, so every path's top 6 is in the fused 6 unless it found fewer).
    expected = fuse({p: sorted(v, key=lambda x: -x[1]) for p, v in per_path.items()}, method=method, depth=6,
                    weights=DEFAULT_WEIGHTS)
    assert [round(s, 9) for _, s in expected] == [round(h.score, 9) for h in hits]
    assert hits[0].title == "First for Women"
    assert {"chunk", "atom", "fulltext"} <= {s.path for s in hits[0].sources}


def test_hybrid_weight_zero_skips_a_path(distilled: Corpus) -> None:
    only_chunks = {"chunk": 1.0, "atom": 0.0, "fulltext": 0.0, "fulltext_atom": 0.0}
    hits = make_retriever("hybrid", distilled.store, EMBEDDER, weights=only_chunks).retrieve("magazine", k=3)
    assert hits and all({s.path for s in h.sources} == {"chunk"} for h in hits)


def test_multigrain_aggregates_layers(distilled: Corpus) -> None:
    hits = make_retriever("multigrain", distilled.store, EMBEDDER).retrieve("Who was born in Newburgh?", k=3)
    assert hits[0].title == "Timothy Shay Arthur"
    paths = {s.path for s in hits[0].sources}
    assert {"chunk", "section", "document"} <= paths
    parts = {s.path: s.score for s in hits[0].sources}
    up = max(parts.get("up", -2.0) - parts["chunk"], 0.0)
    assert hits[0].score == pytest.approx(parts["chunk"] + 0.25 * parts["section"] + 0.25 * parts["document"] + up)


def test_title_links_need_a_verbatim_title(corpus: Corpus) -> None:
    vector = query_vector(EMBEDDER, "writer")
    texts = ["It was edited by Timothy Shay Arthur.", "a city named hamburger", "?", "Newburgh and Hamburg"]
    found = title_links(corpus.store, texts, vector, exclude_documents=[[], [], [], [corpus.documents["Hamburg"]]])
    assert [[h.title for h in hits] for hits in found] == [["Timothy Shay Arthur"], [], [], ["Newburgh"]]
    assert title_core("Tom Smith (footballer)") == "Tom Smith"
    assert mentions_title("born in Newburgh.", "Newburgh") and not mentions_title("Newburghs", "Newburgh")


def test_strata_follows_bridge_links_and_explains_them(distilled: Corpus) -> None:
    with_entities = {"entity": 0.5}  # entity links are off by default (weight 0)
    hits = make_retriever("strata", distilled.store, EMBEDDER, weights=with_entities).retrieve(
        "Where was the editor of Arthur's Magazine born?", k=3)
    titles = [h.title for h in hits]
    assert titles[0] == "Arthur's Magazine"
    assert "Timothy Shay Arthur" in titles
    linked = next(h for h in hits if h.title == "Timothy Shay Arthur")
    assert any(s.path == "bridge" and s.via == "Arthur's Magazine" for s in linked.sources)
    assert any(s.path == "entity" for h in hits for s in h.sources)
    default = make_retriever("strata", distilled.store, EMBEDDER).retrieve(
        "Where was the editor of Arthur's Magazine born?", k=3)
    assert not any(s.path in ("entity", "ppr") for h in default for s in h.sources)


def test_strata_places_a_seeds_bridge_link_right_after_it(corpus: Corpus) -> None:
    question = "Which magazine was edited by the writer Timothy Shay Arthur?"
    hits = make_retriever("strata", corpus.store, EMBEDDER, weights={"named_by": 0.0}).retrieve(question, k=6)
    seeds = hybrid_hits_with_links(corpus.store, query_vector(EMBEDDER, question), question, k=6, seeds=3).hits
    followed = 0
    for seed in seeds[:3]:
        linked = named_links(seed.hit.text, seed.link_candidates or [])
        if linked:  # the seed's nearest link follows it, unless it came first
            at = [h.chunk_id for h in hits].index(seed.hit.chunk_id)
            assert linked[0].chunk_id in [h.chunk_id for h in hits[:at + 2]]
            followed += 1
    assert followed >= 1
    unplaced = make_retriever("strata", corpus.store, EMBEDDER, follow=0, weights={"named_by": 0.0})
    assert not any(s.path == "bridge" for h in unplaced.retrieve(question, k=6) for s in h.sources)


def test_strata_follows_the_passages_the_question_names_with_their_bridge_links(corpus: Corpus) -> None:
    # One hybrid seed: the magazine it is not is still a seed, because the question names it.
    question = "Which magazine was started first, Arthur's Magazine or First for Women?"
    strata = make_retriever("strata", corpus.store, EMBEDDER, seeds=1, weights={"named_by": 0.0})
    hits = strata.retrieve(question, k=6)
    titles = [h.title for h in hits]
    for magazine, named in (("Arthur's Magazine", "Timothy Shay Arthur"), ("First for Women", "Bauer Media Group")):
        assert titles.index(named) == titles.index(magazine) + 1, titles
        link = hits[titles.index(named)]
        assert any(s.path == "bridge" and s.via == magazine for s in link.sources), link.sources
    unfollowed = make_retriever("strata", corpus.store, EMBEDDER, seeds=1, follow=0, weights={"named_by": 0.0})
    assert not any(s.path == "bridge" for h in unfollowed.retrieve(question, k=6) for s in h.sources)


def test_strata_finds_the_passages_that_name_a_seed(corpus: Corpus) -> None:
    # "Arthur's Magazine" names Timothy Shay Arthur (a REFERENCES of the load); the question names only him.
    question = "Timothy Shay Arthur popular American writer born in Newburgh"
    vector = query_vector(EMBEDDER, question)
    seeds = hybrid_hits_with_links(corpus.store, vector, question, k=5, seeds=3, named_by=1).hits
    writer = next(s for s in seeds[:3] if s.hit.title == "Timothy Shay Arthur")
    assert [(h.title, h.sources[0].path, h.sources[0].via) for h in writer.named_by] == [
        ("Arthur's Magazine", "named_by", "Timothy Shay Arthur")]
    assert all(s.named_by == [] for s in seeds[3:])
    assert hybrid_hits_with_links(corpus.store, vector, question, k=5, seeds=3).hits[0].named_by == []
    hits = make_retriever("strata", corpus.store, EMBEDDER, follow=0).retrieve(question, k=5)
    magazine = next(h for h in hits if h.title == "Arthur's Magazine")
    assert any(s.path == "named_by" and s.via == "Timothy Shay Arthur" for s in magazine.sources)
    filtered = hybrid_hits_with_links(corpus.store, vector, question, k=5, seeds=3, named_by=1, where=RetrievalFilter(
        exclude_chunk_ids=[corpus.chunks["Arthur's Magazine"]])).hits
    assert all(h.title != "Arthur's Magazine" for s in filtered for h in s.named_by)


def test_strata_uses_entities_distilled_after_it_was_made(corpus: Corpus) -> None:
    strata = make_retriever("strata", corpus.store, EMBEDDER, weights={"entity": 0.5})
    question = "Where was the editor of Arthur's Magazine born?"
    assert not any(s.path == "entity" for h in strata.retrieve(question, k=3) for s in h.sources)
    add_facts(corpus)
    assert any(s.path == "entity" for h in strata.retrieve(question, k=3) for s in h.sources)


def test_seed_links_come_with_the_hybrid_query_and_match_a_lookup(distilled: Corpus) -> None:
    question = "Where was the editor of Arthur's Magazine born?"
    vector = query_vector(EMBEDDER, question)
    stored = distilled.store.query("MATCH (c:Chunk {id: $id}) RETURN c.name_terms AS terms",
                                   id=distilled.chunks["Arthur's Magazine"])
    assert stored[0]["terms"] == name_query(PASSAGES["Arthur's Magazine"])
    assert stored[0]["terms"] == "arthur magazine american philadelphia timothy shay"
    linked = hybrid_hits_with_links(distilled.store, vector, question, k=5, seeds=2).hits
    assert [h.link_candidates == [] for h in linked[2:]] == [True, True, True]
    for seed in linked[:2]:
        looked_up = title_links(distilled.store, [seed.hit.text], vector, exclude_documents=[[seed.hit.document_id]])
        assert seed.link_candidates is not None
        assert [h.chunk_id for h in named_links(seed.hit.text, seed.link_candidates)] == [
            h.chunk_id for h in looked_up[0]]
    every = hybrid_hits_with_links(distilled.store, vector, question, k=5, seeds=5).hits
    magazine = next(s for s in every if s.hit.title == "Arthur's Magazine")
    assert "Timothy Shay Arthur" in [h.title for h in named_links(magazine.hit.text, magazine.link_candidates or [])]
    asked = hybrid_hits_with_links(distilled.store, vector, question, k=5, seeds=2, question_links=True)
    assert [h.chunk_id for h in named_links(question, asked.question_links)] == [
        h.chunk_id for h in title_links(distilled.store, [question], vector, exclude_documents=[[]])[0]]
    assert [h.title for h in named_links(question, asked.question_links)] == ["Arthur's Magazine"]


def test_strata_looks_links_up_for_chunks_loaded_without_name_terms(distilled: Corpus) -> None:
    question = "Where was the editor of Arthur's Magazine born?"
    strata = make_retriever("strata", distilled.store, EMBEDDER)
    before = [(h.chunk_id, h.score) for h in strata.retrieve(question, k=4)]
    distilled.store.query("MATCH (c:Chunk) REMOVE c.name_terms", routing=WRITE)
    assert hybrid_hits_with_links(distilled.store, query_vector(EMBEDDER, question), question, k=3,
                                  seeds=3).hits[0].link_candidates is None
    assert [(h.chunk_id, h.score) for h in strata.retrieve(question, k=4)] == before


def test_strata_links_passages_titled_by_identifiers_by_the_names_they_open_with(store: GraphStore,
                                                                                tmp_path: Path) -> None:
    # The same passages under opaque titles: the question and the seeds name them by their openings' names.
    untitled = load_passages(store, tmp_path, {f"P{n:04d}": text for n, text in enumerate(PASSAGES.values())})
    hits = make_retriever("strata", store, EMBEDDER).retrieve("Where was the editor of Arthur's Magazine born?", k=3)
    magazine = next(h for h in hits if h.text.startswith("Arthur's Magazine"))
    assert any(s.path == "title" and s.via == "Arthur's Magazine" for s in magazine.sources)
    editor = next(h for h in hits if h.text.startswith("Timothy Shay Arthur"))  # named by the magazine's passage
    assert any(s.path == "bridge" and s.via_id == magazine.chunk_id for s in editor.sources)
    assert set(untitled.chunks) <= {f"P{n:04d}" for n in range(len(PASSAGES))}


def test_strata_links_a_biography_by_the_short_form_others_call_it(store: GraphStore, tmp_path: Path) -> None:
    corpus = load_passages(store, tmp_path, {
        "P0000": "Natural Born Killers: A Soundtrack is the soundtrack to the film, produced by Trent Reznor.",
        "P0001": "Michael Trent Reznor (born May 17, 1965) is an American singer and record producer.",
        "P0002": "Hamburg is a port city in northern Germany on the Elbe river.",
    })
    vector = query_vector(EMBEDDER, "producer")
    found = title_links(store, ["It was produced by Trent Reznor.", "Michael Reznor", "Reznor"], vector)
    assert [[(h.title, h.sources[0].via) for h in hits] for hits in found] == [
        [("P0001", "Trent Reznor")], [("P0001", "Michael Reznor")], []]
    hits = make_retriever("strata", store, EMBEDDER).retrieve(
        "Who produced the soundtrack Natural Born Killers: A Soundtrack?", k=3)
    producer = next(h for h in hits if h.chunk_id == corpus.chunks["P0001"])
    assert any(s.path == "bridge" and s.via_id == corpus.chunks["P0000"] for s in producer.sources)


@pytest.mark.parametrize("method", ["chunk", "atom", "hybrid", "multigrain", "strata"])
def test_an_empty_question_is_a_clear_error_not_a_server_error(distilled: Corpus, method: str) -> None:
    with pytest.raises(RetrievalError, match="the question is empty"):
        make_retriever(method, distilled.store, EMBEDDER).retrieve("   ", k=3)


def test_chunks_by_id_scores_against_a_vector(corpus: Corpus) -> None:
    rows = hits_by_id(corpus.store, [corpus.chunks["Hamburg"]], query_vector(EMBEDDER, "Hamburg Elbe"))
    assert rows[corpus.chunks["Hamburg"]]["score"] > 0
    assert hits_by_id(corpus.store, [corpus.chunks["Hamburg"]], None)[corpus.chunks["Hamburg"]]["score"] is None


def test_hierarchical_retriever_merges_both_paths(distilled: Corpus) -> None:
    from kg.retrieval.methods.hr import HierarchicalRetriever

    hr = HierarchicalRetriever(distilled.store, EMBEDDER, chunk_threshold=0.0, atom_threshold=0.0, chunk_k=2, atom_k=1)
    hits = hr.retrieve_hierarchical("magazine", atomic_queries=["Who was born in Newburgh?", "Hudson River"])
    titles = {h.title for h in hits}
    assert {"Timothy Shay Arthur", "Newburgh"} <= titles
    assert len(hits) <= 2 + 2 and len(titles) == len(hits)


def test_unknown_method_is_an_error(corpus: Corpus) -> None:
    from kg.errors import RetrievalError

    with pytest.raises(RetrievalError):
        make_retriever("nope", corpus.store, EMBEDDER)


def test_client_retrieve_delegates_to_the_registry(distilled: Corpus, tmp_path: Path) -> None:
    from kg.app.client import Strata
    from kg.llm import OfflineLLM
    from kg.provisioning import Endpoint
    from kg.settings import Settings

    settings = Settings.from_env({"STRATA_HOME": str(tmp_path)})
    endpoint = Endpoint("bolt://unused", "neo4j", "", None, "remote")
    kb = Strata(settings, distilled.store, EMBEDDER, endpoint, OfflineLLM())
    hits = kb.retrieve("Hudson River", method="fulltext", k=2)
    assert hits[0].title == "Newburgh" and "fulltext" in hits[0].explain()


QUESTION = "Where was the editor of Arthur's Magazine born?"


def _tag(corpus: Corpus, titles: list[str], tag: str) -> None:
    corpus.store.query("MATCH (d:Document) WHERE d.title IN $titles SET d.metadata = [$tag]", routing=WRITE,
                       titles=titles, tag=tag)


def test_strata_document_and_metadata_filters_hold_on_every_path(distilled: Corpus) -> None:
    strata = make_retriever("strata", distilled.store, EMBEDDER)
    unfiltered = {h.title for h in strata.retrieve(QUESTION, k=6)}
    assert "Arthur's Magazine" in unfiltered  # named by the question: title and entity links find it
    inside = ["Timothy Shay Arthur", "Newburgh", "Hamburg"]
    _tag(distilled, inside, "team=a")
    _tag(distilled, [t for t in PASSAGES if t not in inside], "team=b")
    by_documents = RetrievalFilter(document_ids=[distilled.documents[t] for t in inside])
    by_metadata = RetrievalFilter(metadata=["team=a"])
    for where in (by_documents, by_metadata):
        hits = strata.retrieve(QUESTION, k=6, where=where)
        assert hits and {h.title for h in hits} <= set(inside), where
        assert "Timothy Shay Arthur" in {h.title for h in hits}
    assert strata.retrieve(QUESTION, k=6, where=RetrievalFilter(metadata=["team=c"])) == []
    assert strata.retrieve(QUESTION, k=6, where=RetrievalFilter(formats=["pdf"])) == []


@pytest.mark.parametrize("method", ["chunk", "atom", "fulltext", "hybrid", "multigrain", "kg2rag", "tags", "hr",
                                    "strata"])
def test_metadata_filter_holds_for_every_method(distilled: Corpus, method: str) -> None:
    _tag(distilled, ["Newburgh", "Hamburg"], "team=a")
    retriever = make_retriever(method, distilled.store, EMBEDDER)
    question = "Who edited Arthur's Magazine, and which city lies on the Hudson River or the Elbe?"
    hits = retriever.retrieve(question, k=6, where=RetrievalFilter(metadata=["team=a"]))
    assert {h.title for h in hits} <= {"Newburgh", "Hamburg"}
