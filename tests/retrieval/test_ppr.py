"""``ppr``: HippoRAG 2's seed weights, the weight groups, the local PageRank and the client-held graph's PageRank
(no Neo4j); in Neo4j: GDS on the session's server, multi-hop ranking with explanations in memory and in GDS, the
GDS projection and the client-held graph following a load and a delete, the engine "auto" picks, and the
Cypher-only fallback agreeing with the client-held graph and with GDS."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import pytest

from kg.errors import RetrievalError
from kg.layers.resource.documents import delete_documents
from kg.provisioning.local import GDS_PROCEDURE_JARS, GDS_VERSION
from kg.retrieval import make_retriever, method_settings
from kg.retrieval.methods.ppr import (
    GRAPH_PREFIX,
    MemoryGraph,
    PPRRetriever,
    Seed,
    local_pagerank,
    memory_graph,
    seed_groups,
    seed_weights,
)
from kg.retrieval.settings import PPRSettings
from kg.store.base import GraphStore
from kg.store.queries import PPR_GRAPHS, PPREdgesRow, PPRSeedRow
from tests.conftest import TestServer
from tests.retrieval.conftest import EMBEDDER, PASSAGES, WRITE, Corpus, load_passages

Kind = Literal["fact", "statement", "name", "dense", "lexical"]


def _row(kind: Kind, id: str, score: float, *, via_id: str | None = None, chunks: int = 1) -> PPRSeedRow:
    return {"kind": kind, "id": id, "name": id, "score": score, "via": via_id, "via_id": via_id,
            "chunks": chunks}


def test_seed_weights_follow_hipporag2() -> None:
    rows = [
        _row("fact", "e:a", 0.9, via_id="f1", chunks=2), _row("fact", "e:b", 0.9, via_id="f1", chunks=1),
        _row("fact", "e:b", 0.5, via_id="f2", chunks=1), _row("fact", "e:c", 0.5, via_id="f2", chunks=4),
        _row("fact", "e:d", 0.1, via_id="f3"), _row("statement", "e:e", 0.1, via_id="a1"),
        _row("statement", "e:s", 0.7, via_id="a2", chunks=2),
        _row("name", "e:n", 1.0, chunks=5),
        _row("dense", "c1", 0.8), _row("dense", "c2", 0.6), _row("dense", "c3", 0.4),
        _row("lexical", "c3", 12.0), _row("lexical", "c4", 6.0),
    ]
    seeds = seed_weights(rows, fact_seeds=3, passage_weight=0.05)
    # Facts and statements (atoms) are one pool, min-max normalised (f1 1.0, a2 0.75, f2 0.5); only the top 3
    # seed; an entity takes the mean of its propositions' scores over the number of chunks that mention it.
    assert {e: round(s.weight, 6) for e, s in seeds.entities.items()} == {
        "e:a": 0.5, "e:b": 0.75, "e:c": 0.125, "e:s": 0.375, "e:n": 0.2}
    assert "e:d" not in seeds.entities and "e:e" not in seeds.entities
    assert seeds.entities["e:s"].why == "statement 'a2' > e:s"
    # Passages: min-max normalised per path, times 0.05; the larger of dense and lexical.
    assert {c: round(s.weight, 6) for c, s in seeds.chunks.items()} == {"c1": 0.05, "c2": 0.025, "c3": 0.05}
    assert seeds.entities["e:b"].why.startswith("fact 'f1'")


def test_seed_groups_bucket_log_weights() -> None:
    seeds = [Seed("Entity", "a", 1.0, ""), Seed("Entity", "b", 0.9, ""), Seed("Chunk", "c", 0.05, ""),
             Seed("Chunk", "d", 0.04, ""), Seed("Entity", "e", 0.2, "")]
    groups = seed_groups(seeds, 3)
    assert [(sorted(g["entities"]), sorted(g["chunks"])) for g in groups] == [
        ([], ["c", "d"]), (["e"], []), (["a", "b"], [])]
    assert groups[2]["weight"] == pytest.approx(0.95)
    assert len(seed_groups(seeds, 1)) == 1
    assert seed_groups([], 3) == []


def test_local_pagerank_is_personalised_pagerank() -> None:
    """The push iteration equals (1-d) * sum_t (d P)^t r, P the weight-normalised transition matrix."""
    edges = {("a", "b"): 1.0, ("b", "c"): 2.0, ("c", "a"): 1.0, ("c", "d"): 0.5}
    nodes = ["a", "b", "c", "d"]
    neighbours: dict[str, list[tuple[str, float]]] = {n: [] for n in nodes}
    for (u, v), w in edges.items():
        neighbours[u].append((v, w))
        neighbours[v].append((u, w))
    degree = {n: sum(w for _, w in neighbours[n]) for n in nodes}
    restart = {"a": 1.0, "d": 0.05}
    rank = local_pagerank(restart, neighbours, degree, damping=0.5, iterations=60, tolerance=1e-12)
    index = {n: i for i, n in enumerate(nodes)}
    matrix = np.zeros((4, 4))
    for u in nodes:
        for v, w in neighbours[u]:
            matrix[index[v], index[u]] += w / degree[u]
    r = np.array([restart.get(n, 0.0) for n in nodes])
    exact = 0.5 * np.linalg.solve(np.eye(4) - 0.5 * matrix, r)
    assert [rank[n] for n in nodes] == pytest.approx(list(exact), rel=1e-6)


def _edges(rows: list[tuple[str, bool, list[tuple[str, float]]]]) -> PPREdgesRow:
    return {"ids": [node for node, _, _ in rows], "chunks": [chunk for _, chunk, _ in rows],
            "targets": [[t for t, _ in out] for _, _, out in rows],
            "weights": [[w for _, w in out] for _, _, out in rows]}


def test_memory_graph_is_local_pagerank_on_the_whole_graph() -> None:
    """The client-held graph's vectorised push gives local_pagerank's masses when every neighbour is known: same
    edges both ways, a node's mass shared by its weighted degree, parallel facts adding up, the same tolerance."""
    rows = _edges([
        ("c1", True, [("e:a", 1.0), ("e:b", 1.0)]),
        ("c2", True, [("e:b", 1.0)]),
        ("c3", True, [("e:c", 1.0)]),
        ("c4", True, []),  # no edge: still a node
        ("e:a", False, [("e:b", 1.0), ("e:b", 1.0)]),  # two facts a -> b
        ("e:b", False, [("e:c", 1.0)]),
        ("e:c", False, []),
        ("c1", True, [("c2", 0.5), ("c3", 0.5)]),  # c1 names a document of two chunks
    ])
    graph = MemoryGraph(rows)
    assert graph.edges == 9 and len(graph.ids) == 7
    neighbours: dict[str, list[tuple[str, float]]] = {n: [] for n in graph.ids}
    for node, targets, weights in zip(rows["ids"], rows["targets"], rows["weights"], strict=True):
        for t, w in zip(targets, weights, strict=True):
            neighbours[node].append((t, w))
            neighbours[t].append((node, w))
    degree = {n: sum(w for _, w in out) for n, out in neighbours.items()}
    restart = {"e:a": 1.0, "c3": 0.05, "c4": 0.02}
    for iterations, tolerance in ((20, 1e-4), (60, 1e-12), (2, 0.0)):
        expected = local_pagerank(restart, neighbours, degree, damping=0.5, iterations=iterations,
                                  tolerance=tolerance)
        rank = graph.pagerank(restart, damping=0.5, iterations=iterations, tolerance=tolerance)
        assert {n: float(rank[graph.index[n]]) for n in expected} == pytest.approx(expected, rel=1e-12)
        assert all(rank[graph.index[n]] == 0 for n in graph.ids if n not in expected)
    # Only chunks are ranked, by mass (ties by id), those without mass left out.
    rank = graph.pagerank({"c4": 1.0}, damping=0.5, iterations=20, tolerance=1e-4)
    assert graph.top_chunks(rank, 5) == [("c4", 0.5)]
    rank = graph.pagerank({"e:b": 1.0}, damping=0.5, iterations=20, tolerance=1e-4)
    masses = sorted(((n, float(rank[graph.index[n]])) for n in ("c1", "c2", "c3", "c4")), key=lambda x: -x[1])
    assert masses[3] == ("c4", 0.0)  # not reached
    assert graph.top_chunks(rank, 2) == masses[:2] and graph.top_chunks(rank, 9) == masses[:3]


def test_settings_are_named_and_validated() -> None:
    settings = method_settings("ppr", damping=0.6)
    assert isinstance(settings, PPRSettings)
    assert (settings.damping, settings.passage_weight, settings.fact_seeds) == (0.6, 0.05, 5)
    assert (settings.engine, settings.memory_nodes, settings.concurrency) == ("auto", 0, 1)
    assert PPRSettings.model_validate({"engine": "memory"}).engine == "memory"
    with pytest.raises(RetrievalError):
        method_settings("ppr", damping=1.5)
    with pytest.raises(RetrievalError):
        method_settings("ppr", engine="spark")


def test_gds_procedure_jars_are_the_ones_with_procedures() -> None:
    names = [f"proc-{GDS_VERSION}.jar", f"alpha-proc-{GDS_VERSION}.jar", f"proc-centrality-{GDS_VERSION}.jar",
             f"proc-sysinfo-{GDS_VERSION}.jar"]
    assert all(GDS_PROCEDURE_JARS.fullmatch(n) for n in names)
    others = [f"procedure-integration-{GDS_VERSION}.jar", "proc-common-2.0.0.jar", "core-2.13.9.jar"]
    assert not any(GDS_PROCEDURE_JARS.fullmatch(n) for n in others)


# -- in Neo4j --------------------------------------------------------------------------------------------------


def test_the_local_test_server_has_gds(neo4j_server: TestServer, store: GraphStore) -> None:
    """A server Strata provisions itself (the session's, when neither a URI nor Docker is given) has GDS."""
    if neo4j_server.local is None:
        pytest.skip("the session's server was not provisioned by Strata (STRATA_TEST_NEO4J_URI or Docker)")
    assert store.query("CALL gds.version() YIELD gdsVersion RETURN gdsVersion")[0]["gdsVersion"] == GDS_VERSION
    assert PPRRetriever(store, EMBEDDER).uses_gds()
    assert PPRRetriever(store, EMBEDDER).uses_weighted()
    assert not PPRRetriever(store, EMBEDDER, weighted=False).uses_weighted()


def _ranked(store: GraphStore, question: str, **settings: object) -> list[str]:
    chosen = PPRSettings.model_validate(settings)
    return [h.title for h in make_retriever("ppr", store, EMBEDDER, settings=chosen).retrieve(question, k=6)]


@pytest.mark.parametrize("engine", ["memory", "gds"])
def test_ppr_reaches_the_second_hop_and_explains_it(distilled: Corpus, engine: str) -> None:
    if engine == "gds" and not PPRRetriever(distilled.store, EMBEDDER).uses_gds():
        pytest.skip("the session's server has no GDS")
    retriever = PPRRetriever(distilled.store, EMBEDDER, engine=engine)
    hits = retriever.retrieve("Where was Timothy Shay Arthur born?", k=4)
    titles = [h.title for h in hits]
    # The named entity's passage and the one whose fact is nearest the question (which weighs more with the
    # exact restart weights, ahead with "memory"; GDS's three weight groups put the named one first), then
    # the bridge passage, one fact away from the named entity.
    assert set(titles[:2]) == {"Timothy Shay Arthur", "Arthur's Magazine"}
    assert titles[2] == "Newburgh"
    newburgh = next(h for h in hits if h.title == "Newburgh")
    assert newburgh.sources[0].path == "ppr"
    why = newburgh.explain()
    assert "seed:" in why and "Newburgh" in why
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_the_atoms_nearest_the_question_seed_the_entities_they_name(distilled: Corpus) -> None:
    retriever = PPRRetriever(distilled.store, EMBEDDER)
    question = "Where was Timothy Shay Arthur born?"
    rows = retriever._read_seeds(EMBEDDER.embed([question])[0], question)[0]["seeds"]
    statements = [r for r in rows if r["kind"] == "statement"]
    # An entity the atom's chunk mentions, under a name the atom's text holds (the fixture's mentions keep no
    # names, so the entity's own), scored by the atom's cosine to the question.
    assert statements and all(r["name"] and r["name"] in (r["via"] or "") for r in statements)
    assert "Timothy Shay Arthur" in {r["name"] for r in statements}
    atoms = {r["id"]: r["text"] for r in distilled.store.query("MATCH (a:Atom) RETURN a.id AS id, a.text AS text")}
    assert all(atoms[r["via_id"] or ""] == r["via"] for r in statements)


def test_auto_runs_in_memory_up_to_memory_nodes(distilled: Corpus) -> None:
    """"auto": the client-held graph while the graph has at most memory_nodes chunks and entities (an opt-in:
    none by default); otherwise GDS when the server has it, else the Cypher fallback with a warning."""
    store = distilled.store
    assert PPRRetriever(store, EMBEDDER, memory_nodes=200_000).engine_for(12) == "memory"
    big = PPRRetriever(store, EMBEDDER)
    if PPRRetriever(store, EMBEDDER).uses_gds():
        assert big.engine_for(12) == "gds"
    else:
        with pytest.warns(RuntimeWarning, match="Graph Data Science"):
            assert big.engine_for(12) == "cypher"
    assert PPRRetriever(store, EMBEDDER, engine="cypher").engine_for(12) == "cypher"


def load_hudson(store: GraphStore, tmp_path: Path) -> None:
    """A load: a passage naming the river, which mentions the river's entity."""
    load_passages(store, tmp_path, {**PASSAGES, "Hudson River": "The Hudson River flows past Newburgh to New York."})
    store.query("MATCH (c:Chunk {title: 'Hudson River'}) MATCH (e:Entity {id: 'e:hudson river'}) "
                "MERGE (c)-[:MENTIONS]->(e)", routing=WRITE)


def test_projection_follows_a_load_and_a_delete(distilled: Corpus, tmp_path: Path) -> None:
    store = distilled.store
    if not PPRRetriever(store, EMBEDDER).uses_gds():
        pytest.skip("the session's server has no GDS")
    retriever = PPRRetriever(store, EMBEDDER, engine="gds")
    question = "Which river does Newburgh lie on?"
    assert "Hudson River" not in [h.title for h in retriever.retrieve(question, k=6)]
    first = retriever.ensure_projection()

    # A load: the new passage is ranked by the next query, through a new projection; the old one is gone.
    load_hudson(store, tmp_path)
    assert "Hudson River" in [h.title for h in retriever.retrieve(question, k=6)]
    second = retriever.ensure_projection()
    assert second != first
    assert [r["graph"] for r in store.read(PPR_GRAPHS, prefix=GRAPH_PREFIX)] == [second]

    # A delete: the deleted passage is never ranked again (the projection does not keep its node).
    hudson = store.query("MATCH (d:Document {title: 'Hudson River'}) RETURN d.id AS id")[0]["id"]
    delete_documents(store, [hudson])
    assert "Hudson River" not in [h.title for h in retriever.retrieve(question, k=6)]
    # Deleting the newest load gives back the first graph: its fingerprint, projected again (it was dropped).
    assert retriever.ensure_projection() == first
    assert [r["graph"] for r in store.read(PPR_GRAPHS, prefix=GRAPH_PREFIX)] == [first]
    # A graph that did not change keeps its projection.
    millis = store.query("CALL gds.graph.list($g) YIELD creationTime RETURN creationTime AS t", g=first)[0]["t"]
    retriever.retrieve(question, k=3)
    assert store.query("CALL gds.graph.list($g) YIELD creationTime RETURN creationTime AS t", g=first)[0]["t"] == millis


def test_memory_graph_follows_a_load_and_a_delete(distilled: Corpus, tmp_path: Path) -> None:
    store = distilled.store
    retriever = PPRRetriever(store, EMBEDDER, engine="memory")
    question = "Which river does Newburgh lie on?"
    assert "Hudson River" not in [h.title for h in retriever.retrieve(question, k=6)]
    first = retriever.graph_name()
    held = memory_graph(store, first, retriever.weights)
    assert memory_graph(store, first, retriever.weights) is held  # an unchanged graph is not read again

    # A load: the next query reads the new graph and ranks the new passage.
    load_hudson(store, tmp_path)
    assert "Hudson River" in [h.title for h in retriever.retrieve(question, k=6)]
    second = retriever.graph_name()
    assert second != first
    hudson_chunk = store.query("MATCH (c:Chunk {title: 'Hudson River'}) RETURN c.id AS id")[0]["id"]
    assert hudson_chunk in memory_graph(store, second, retriever.weights).index

    # A delete: the deleted passage is never ranked again; the graph before the load is read again.
    hudson = store.query("MATCH (d:Document {title: 'Hudson River'}) RETURN d.id AS id")[0]["id"]
    delete_documents(store, [hudson])
    assert "Hudson River" not in [h.title for h in retriever.retrieve(question, k=6)]
    assert retriever.graph_name() == first
    again = memory_graph(store, first, retriever.weights)
    assert again is not held and hudson_chunk not in again.index


def test_cypher_fallback_agrees_with_memory_and_gds(distilled: Corpus) -> None:
    store = distilled.store
    question = "Who published the magazine First for Women, and where is it based?"
    local = _ranked(store, question, engine="cypher")
    assert local[:2] == ["First for Women", "Bauer Media Group"]
    # Both run the exact restart weights: the same ranking.
    assert _ranked(store, question, engine="memory") == local
    if not PPRRetriever(store, EMBEDDER).uses_gds():
        pytest.skip("the session's server has no GDS")
    # Strata's weighted procedure runs the exact restart weights; without it, GDS with as many weight groups
    # as seeds does too.
    assert _ranked(store, question, engine="gds") == local
    assert _ranked(store, question, engine="gds", weighted=False, levels=100) == local


def test_weighted_gds_pagerank_is_the_exact_pagerank(distilled: Corpus) -> None:
    """Strata's strata.ppr.stream on the GDS projection gives the client-held graph's masses (the exact restart
    weights, one run): the same chunks in the same order with the same scores, for several questions."""
    store = distilled.store
    gds = PPRRetriever(store, EMBEDDER, engine="gds")
    if not gds.uses_weighted():
        pytest.skip("the session's server has no strata.ppr.stream (not provisioned by Strata)")
    memory = PPRRetriever(store, EMBEDDER, engine="memory")
    for question in ("Where was Timothy Shay Arthur born?", "Which magazine was started first?",
                     "Who published the magazine First for Women, and where is it based?"):
        exact = [(h.chunk_id, h.score) for h in memory.retrieve(question, k=8)]
        weighted = [(h.chunk_id, h.score) for h in gds.retrieve(question, k=8)]
        assert [c for c, _ in weighted] == [c for c, _ in exact]
        assert [s for _, s in weighted] == pytest.approx([s for _, s in exact], rel=1e-9)


def test_engine_gds_and_no_seeds(distilled: Corpus) -> None:
    retriever = PPRRetriever(distilled.store, EMBEDDER, engine="gds")
    if retriever.uses_gds():
        # Nonsense names no entity: the passages' dense seeds alone restart the walk, which GDS ranks.
        hits = retriever.retrieve("zzzz qqqq", k=3)
        assert 0 < len(hits) <= 3 and all(h.sources[0].path == "ppr" for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    else:
        with pytest.raises(RetrievalError, match="Graph Data Science"):
            retriever.retrieve("Hamburg", k=3)
