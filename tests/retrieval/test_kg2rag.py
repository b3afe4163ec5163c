"""KG2RAG: maximum spanning trees and paragraph order on a constructed graph, and the retriever in Neo4j."""

from __future__ import annotations

from collections.abc import Sequence

from kg.retrieval import make_retriever
from kg.retrieval.methods.kg2rag import FactEdge, KG2RAGRetriever, maximum_spanning_forest, organise, paragraph_order
from tests.retrieval.conftest import EMBEDDER, Corpus

# Component 1: a triangle a-b-c with a parallel a-b edge, plus c-d. Component 2: x-y.
EDGES = [
    FactEdge("f1", "a r b", "a", "b", "c1", 0.9),
    FactEdge("f2", "a s b", "a", "b", "c2", 0.4),  # parallel to f1, lighter: dropped
    FactEdge("f3", "b r c", "b", "c", "c3", 0.8),
    FactEdge("f4", "a r c", "a", "c", "c4", 0.3),  # closes the cycle a-b-c: dropped
    FactEdge("f5", "c r d", "c", "d", "c5", 0.5),
    FactEdge("f6", "x r y", "x", "y", "c6", 0.7),
]


def test_maximum_spanning_forest_keeps_the_heaviest_acyclic_edges() -> None:
    forest = maximum_spanning_forest(EDGES)
    assert [[e.fact_id for e in tree] for tree in forest] == [["f1", "f3", "f5"], ["f6"]]


def test_paragraph_order_is_depth_first_from_the_heaviest_edge() -> None:
    tree = maximum_spanning_forest(EDGES)[0]
    assert paragraph_order(tree) == ["c1", "c3", "c5"]
    # A star where the heaviest edge is in the middle: its heavier neighbour comes first.
    star = [FactEdge("s1", "", "m", "p", "k1", 0.2), FactEdge("s2", "", "m", "q", "k2", 0.9),
            FactEdge("s3", "", "q", "r", "k3", 0.5)]
    assert paragraph_order(star) == ["k2", "k3", "k1"]


def test_organise_ranks_components_by_triple_relevance_and_fills_the_budget() -> None:
    def score(texts: Sequence[str]) -> list[float]:  # the "x r y" component is the relevant one
        return [1.0 if "x r y" in t else 0.5 if "lone" in t else 0.1 for t in texts]

    # A seed outside every component is scored by the same function, on its text: one scale in one sort.
    chosen = organise(EDGES, score, budget=3, singletons=[("c9", "a lone seed"), ("c1", "a lone seed too")])
    assert [c.chunk_ids for c in chosen] == [["c6"], ["c9"], ["c1"]]
    assert [c.relevance for c in chosen] == [1.0, 0.5, 0.1]  # c1 is in a component: scored as its triples
    assert chosen[0].triples == "x r y"
    chosen = organise(EDGES, score, budget=10)
    assert [c.chunk_ids for c in chosen] == [["c6"], ["c1", "c3", "c5"]]
    assert chosen[1].triples == "a r b; b r c; c r d"


def test_kg2rag_expands_from_seeds_through_facts(distilled: Corpus) -> None:
    retriever = KG2RAGRetriever(distilled.store, EMBEDDER, hops=1, seeds=1)
    components, seeds = retriever.retrieve_organised("Arthur's Magazine literary periodical", k=5)
    assert [s.title for s in seeds] == ["Arthur's Magazine"]
    reached = {c for comp in components for c in comp.chunk_ids}
    # One hop from the seed's entities (the magazine, Timothy Shay Arthur): his birth fact's chunk.
    assert {distilled.chunks["Arthur's Magazine"], distilled.chunks["Timothy Shay Arthur"]} <= reached
    assert distilled.chunks["Newburgh"] not in reached  # two hops away
    two = KG2RAGRetriever(distilled.store, EMBEDDER, hops=2, seeds=1).retrieve("Arthur's Magazine periodical", k=5)
    assert "Newburgh" in {h.title for h in two}


def test_kg2rag_hits_explain_the_fact_that_brought_them(distilled: Corpus) -> None:
    hits = make_retriever("kg2rag", distilled.store, EMBEDDER, seeds=1).retrieve("Arthur's Magazine periodical", k=3)
    by_title = {h.title: h for h in hits}
    reached = {src.path: src for src in by_title["Timothy Shay Arthur"].sources}
    assert reached["kg2rag"].via == "Timothy Shay Arthur born in Newburgh"
    # How expansion got there: from the seed, through the entity both chunks mention.
    assert reached["hop"].via == "Arthur's Magazine > Timothy Shay Arthur"
    assert reached["hop"].via_id == "e:timothy shay arthur"
    assert by_title["Arthur's Magazine"].sources[0].path == "chunk"
    assert "hop" not in {src.path for src in by_title["Arthur's Magazine"].sources}  # a seed is not reached
    two = make_retriever("kg2rag", distilled.store, EMBEDDER, seeds=1, hops=2).retrieve(
        "Arthur's Magazine periodical", k=5)
    newburgh = next(h for h in two if h.title == "Newburgh")
    assert [src.via for src in newburgh.sources if src.path == "hop"] == [
        "Arthur's Magazine > Timothy Shay Arthur > Newburgh"]


def test_kg2rag_does_not_expand_through_an_entity_with_more_facts_than_hub_facts(distilled: Corpus) -> None:
    arthur = "e:timothy shay arthur"
    facts = distilled.store.query("MATCH (:Entity {id: $id})<-[:SUBJECT|OBJECT]-(f:Fact) RETURN count(f) AS n",
                                  id=arthur)[0]["n"]

    def expanded_through(hub_facts: int) -> set[str | None]:
        hits = KG2RAGRetriever(distilled.store, EMBEDDER, seeds=1, hub_facts=hub_facts).retrieve(
            "Arthur's Magazine periodical", k=3)
        return {src.via_id for h in hits for src in h.sources if src.path == "hop"}

    assert arthur in expanded_through(facts)  # at the bound it is still walked
    assert arthur not in expanded_through(facts - 1)
