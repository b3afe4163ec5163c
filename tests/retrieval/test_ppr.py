"""``ppr``: HippoRAG 2's seed weights, the weight groups and the local PageRank (no Neo4j); in Neo4j: GDS on the
session's server, multi-hop ranking with explanations, the projection following a load and a delete, and the
Cypher-only fallback agreeing with GDS."""

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
    PPRRetriever,
    Seed,
    local_pagerank,
    seed_groups,
    seed_weights,
)
from kg.retrieval.settings import PPRSettings
from kg.store.base import GraphStore
from kg.store.queries import PPR_GRAPHS, PPRSeedRow
from tests.conftest import TestServer
from tests.retrieval.conftest import EMBEDDER, PASSAGES, WRITE, Corpus, load_passages

Kind = Literal["fact", "name", "dense", "lexical"]


def _row(kind: Kind, id: str, score: float, *, via_id: str | None = None, chunks: int = 1) -> PPRSeedRow:
    return {"kind": kind, "id": id, "name": id, "score": score, "via": via_id, "via_id": via_id,
            "chunks": chunks}


def test_seed_weights_follow_hipporag2() -> None:
    rows = [
        _row("fact", "e:a", 0.9, via_id="f1", chunks=2), _row("fact", "e:b", 0.9, via_id="f1", chunks=1),
        _row("fact", "e:b", 0.5, via_id="f2", chunks=1), _row("fact", "e:c", 0.5, via_id="f2", chunks=4),
        _row("fact", "e:d", 0.1, via_id="f3"), _row("fact", "e:e", 0.1, via_id="f3"),
        _row("name", "e:n", 1.0, chunks=5),
        _row("dense", "c1", 0.8), _row("dense", "c2", 0.6), _row("dense", "c3", 0.4),
        _row("lexical", "c3", 12.0), _row("lexical", "c4", 6.0),
    ]
    seeds = seed_weights(rows, fact_seeds=2, passage_weight=0.05)
    # Facts min-max normalised (f1 1.0, f2 0.5); only the top 2 facts seed; an entity takes the mean of its facts'
    # scores over the number of chunks that mention it.
    assert {e: round(s.weight, 6) for e, s in seeds.entities.items()} == {
        "e:a": 0.5, "e:b": 0.75, "e:c": 0.125, "e:n": 0.2}
    assert "e:d" not in seeds.entities
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


def test_settings_are_named_and_validated() -> None:
    settings = method_settings("ppr", damping=0.6)
    assert isinstance(settings, PPRSettings)
    assert (settings.damping, settings.passage_weight, settings.fact_seeds) == (0.6, 0.05, 5)
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


def _ranked(store: GraphStore, question: str, **settings: object) -> list[str]:
    chosen = PPRSettings.model_validate(settings)
    return [h.title for h in make_retriever("ppr", store, EMBEDDER, settings=chosen).retrieve(question, k=6)]


def test_ppr_reaches_the_second_hop_and_explains_it(distilled: Corpus) -> None:
    retriever = PPRRetriever(distilled.store, EMBEDDER)
    if not retriever.uses_gds():
        pytest.skip("the session's server has no GDS")
    hits = retriever.retrieve("Where was Timothy Shay Arthur born?", k=4)
    titles = [h.title for h in hits]
    assert titles[0] == "Timothy Shay Arthur"
    assert "Newburgh" in titles  # one fact away from the named entity: the bridge passage
    newburgh = next(h for h in hits if h.title == "Newburgh")
    assert newburgh.sources[0].path == "ppr"
    why = newburgh.explain()
    assert "seed:" in why and "Newburgh" in why
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_projection_follows_a_load_and_a_delete(distilled: Corpus, tmp_path: Path) -> None:
    store = distilled.store
    retriever = PPRRetriever(store, EMBEDDER)
    if not retriever.uses_gds():
        pytest.skip("the session's server has no GDS")
    question = "Which river does Newburgh lie on?"
    assert "Hudson River" not in [h.title for h in retriever.retrieve(question, k=6)]
    first = retriever.ensure_projection()

    # A load: the new passage is ranked by the next query, through a new projection; the old one is gone.
    load_passages(store, tmp_path, {**PASSAGES, "Hudson River": "The Hudson River flows past Newburgh to New York."})
    store.query("MATCH (c:Chunk {title: 'Hudson River'}) MATCH (e:Entity {id: 'e:hudson river'}) "
                "MERGE (c)-[:MENTIONS]->(e)", routing=WRITE)
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


def test_cypher_fallback_agrees_with_gds(distilled: Corpus) -> None:
    store = distilled.store
    question = "Who published the magazine First for Women, and where is it based?"
    local = _ranked(store, question, engine="cypher")
    assert local[:2] == ["First for Women", "Bauer Media Group"]
    if not PPRRetriever(store, EMBEDDER).uses_gds():
        pytest.skip("the session's server has no GDS")
    # With as many weight groups as seeds GDS runs the exact restart weights: the same ranking.
    assert _ranked(store, question, levels=100) == local


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
