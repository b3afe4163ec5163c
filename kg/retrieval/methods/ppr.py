"""``ppr``: personalised PageRank over chunks and entities (HippoRAG 2's recipe, adapted to Strata's graph).

HippoRAG 2 (Gutiérrez et al., 2025, "From RAG to Memory") seeds a personalised PageRank with the phrases of
the triples nearest the query and, weighted far less, with every passage by its dense score, runs it over a
graph of phrases and passages, and ranks passages by their PageRank mass. Here:

Graph (``cypher/retrieval/ppr_project.cypher``), undirected and weighted: chunk-entity ``MENTIONS``
(``mention_weight``), entity-entity for every fact from its subject to its object (``fact_weight``; the
reified ``Fact`` collapses to the edge it states, as HippoRAG's relation edges), and chunk-chunk where a chunk
names another document's title (``reference_weight``, shared among that document's chunks; Strata's
``REFERENCES``, which HippoRAG has not). Atoms are left out: an atom hangs off one chunk and would only hold
mass back from it.

Seeds (``cypher/retrieval/ppr_seeds.cypher``) and their restart weights, as HippoRAG 2 sets them:

* the subject and object entities of the ``fact_seeds`` best of ``fact_candidates`` facts by cosine to the
  query, each fact's score min-max normalised over the candidates; an entity's weight is the mean of its facts'
  scores divided by the number of chunks that mention it (HippoRAG 2 has an LLM filter the facts pass first;
  Strata has none here); the atoms nearest the query are in the same pool, each for the entities its chunk
  mentions under a name its text holds (offline, most facts are co-occurrences kept out of the fact index);
* Strata's addition: entities whose name or alias the question contains verbatim, weight 1 divided likewise;
* passages: the ``passage_candidates`` nearest chunks by cosine, min-max normalised, times
  ``passage_weight`` (HippoRAG 2 weighs every passage; the rest weigh ~0 after normalisation), and, likewise
  normalised, the Lucene (BM25) best chunks, a chunk keeping the larger of its two weights.

With no entity seed (a graph without facts, or none relevant) the ranking is the passage seeds' own PageRank,
which HippoRAG 2 replaces by the dense ranking; here the graph still spreads it along references and mentions.

Where the PageRank runs (``engine``; docs/ppr.md has the measurements). By default ("auto") in the database,
in GDS when the server has it, else the fallback below. A long-lived process may opt in (``memory_nodes`` > 0,
or ``engine="memory"``) to running it in this process for a graph of at most ``memory_nodes`` chunks and
entities, on the graph ``ppr_project.cypher`` describes read once with ``ppr_edges.cypher``
(:class:`MemoryGraph`: one vectorised push per iteration, exact restart weights, about 1 ms at 10,000
passages, after a read of about 1 s per change and per process). The graph is named after a fingerprint of
it (label and relationship counts and the newest load, which ``ppr_seeds`` returns with the seeds in the same
round trip), so the first query after a load, a delete or a distillation reads it again; a process holds one
per database.

With GDS, on a named in-memory projection: where the server has Strata's procedure ``strata.ppr.stream``
(``kg/provisioning/plugin/WeightedPageRank.java``, which a server Strata provisions loads as a plugin) and
``weighted`` is on, one run with each seed's exact restart weight: the same push as the client's graph, over the
projection GDS holds, visiting only the nodes the mass reaches. Else ``gds.pageRank.stream`` (damping
``damping``, ``concurrency`` threads), which in GDS 2.13 takes source nodes without weights and visits every node
in each iteration; PageRank is linear in its restart vector, so the seeds are grouped into at most ``levels``
groups of about equal weight (log-spaced), each group runs once and the runs are summed, each scaled by its
group's mean weight. The projection has the same name, is re-projected
lazily by the first query after a change, and stale projections are dropped. A retriever remembers the
projection it last used and consults the GDS catalog only when the fingerprint changes or the projection went
missing (a restarted server, another session that saw a newer graph dropped it).

The Cypher-only fallback (a server without GDS, e.g. Aura Free, and a graph above ``memory_nodes``; a warning
says why) runs the same PageRank in Python on the seeds' neighbourhood read with Cypher
(``ppr_neighbours.cypher``): ``hops`` hops out, at most ``fanout`` neighbours per node and edge kind, degrees
counted in full; exact restart weights.

Example::

    hits = PPRRetriever(store, embedder).retrieve("Which magazine was started first?", k=5)
    print(hits[0].explain())  # ppr 0.031 via "fact 'Arthur's Magazine founded 1844' > Arthur's Magazine > ..."
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from kg.embeddings import Embedder
from kg.errors import QueryError, RetrievalError
from kg.retrieval.base import Hit, HitSource, RetrievalFilter, Retriever
from kg.retrieval.common import filter_params, hit_from_row, query_vector
from kg.retrieval.common_terms import CommonTermRule, shared_common_terms
from kg.store.base import GraphStore
from kg.store.queries import (
    PPR_DROP,
    PPR_EDGES,
    PPR_FILTER,
    PPR_GDS,
    PPR_GRAPHS,
    PPR_NEIGHBOURS,
    PPR_PATHS,
    PPR_PROJECT,
    PPR_RANK,
    PPR_RANK_WEIGHTED,
    PPR_SEEDS,
    PPREdgesRow,
    PPRPathRow,
    PPRSeedRow,
    PPRSeedsRow,
    ScoredChunkRow,
)

__all__ = ["GRAPH_PREFIX", "MemoryGraph", "PPRRetriever", "Seed", "SeedGroup", "Seeds", "local_pagerank",
           "seed_groups", "seed_weights"]

log = logging.getLogger(__name__)

GRAPH_PREFIX = "strata-ppr-"
NO_GDS = ("the Neo4j server has no Graph Data Science library (gds.pageRank.stream is not installed: Aura Free, "
          "or a server or cluster without the GDS plugin); ppr runs its PageRank in Python on the seeds' "
          "neighbourhood read with Cypher instead (slower on large graphs; `strata neo4j start` provisions GDS "
          "with the local server)")


@dataclass(frozen=True)
class Seed:
    """A node the PageRank restarts at: its label, id, restart weight and why it was chosen."""

    label: str  # "Chunk" or "Entity"
    id: str
    weight: float
    why: str


@dataclass
class Seeds:
    entities: dict[str, Seed] = field(default_factory=dict)
    chunks: dict[str, Seed] = field(default_factory=dict)

    def all(self) -> list[Seed]:
        return [*self.entities.values(), *self.chunks.values()]


def _minmax(scores: Sequence[float]) -> list[float]:
    low, high = min(scores), max(scores)
    return [1.0 if high <= low else (s - low) / (high - low) for s in scores]


def seed_weights(rows: Sequence[PPRSeedRow], *, fact_seeds: int, passage_weight: float) -> Seeds:
    """The restart weights of HippoRAG 2 (see the module docstring) from the rows of ``ppr_seeds``."""
    seeds = Seeds()
    facts = [r for r in rows if r["kind"] in ("fact", "statement")]  # propositions, matched alike
    fact_scores: dict[str, float] = {}
    for r in facts:
        fact_scores.setdefault(r["via_id"] or "", float(r["score"]))
    if fact_scores:
        normal = dict(zip(fact_scores, _minmax(list(fact_scores.values())), strict=True))
        top = set(sorted(fact_scores, key=lambda f: (-fact_scores[f], f))[:fact_seeds])
        sums: dict[str, list[float]] = {}
        why: dict[str, str] = {}
        for r in facts:
            fact = r["via_id"] or ""
            if fact in top:
                sums.setdefault(r["id"], []).append(normal[fact])
                why.setdefault(r["id"], f"{r['kind']} {r['via']!r} > {r['name']}")
        chunks = {r["id"]: max(int(r["chunks"]), 1) for r in facts}
        for entity, values in sums.items():
            weight = sum(values) / len(values) / chunks[entity]
            if weight > 0:
                seeds.entities[entity] = Seed("Entity", entity, weight, why[entity])
    for r in rows:
        if r["kind"] == "name":
            weight = 1.0 / max(int(r["chunks"]), 1)
            old = seeds.entities.get(r["id"])
            if old is None or old.weight < weight:
                seeds.entities[r["id"]] = Seed("Entity", r["id"], weight, f"named {r['via']!r} > {r['name']}")
    for kind in ("dense", "lexical"):
        found = [r for r in rows if r["kind"] == kind]
        if not found:
            continue
        for r, value in zip(found, _minmax([float(r["score"]) for r in found]), strict=True):
            weight = passage_weight * value
            old = seeds.chunks.get(r["id"])
            if weight > 0 and (old is None or old.weight < weight):
                seeds.chunks[r["id"]] = Seed("Chunk", r["id"], weight, f"{kind} passage {r['name']!r}")
    return seeds


class SeedGroup(TypedDict):
    """Seeds of about equal restart weight, run as one PageRank's source nodes."""

    chunks: list[str]
    entities: list[str]
    weight: float


def seed_groups(seeds: Sequence[Seed], levels: int) -> list[SeedGroup]:
    """At most ``levels`` groups of seeds of about equal weight (split at equal steps of log weight), each
    with its members' mean weight: ``{"chunks": [...], "entities": [...], "weight": w}``."""
    live = [s for s in seeds if s.weight > 0]
    if not live:
        return []
    logs = [math.log(s.weight) for s in live]
    low, high = min(logs), max(logs)
    step = (high - low) / levels if high > low else 1.0
    buckets: dict[int, list[Seed]] = {}
    for seed, value in zip(live, logs, strict=True):
        buckets.setdefault(min(int((value - low) / step), levels - 1), []).append(seed)
    return [SeedGroup(chunks=[s.id for s in group if s.label == "Chunk"],
                      entities=[s.id for s in group if s.label == "Entity"],
                      weight=sum(s.weight for s in group) / len(group))
            for _, group in sorted(buckets.items())]


def local_pagerank(restart: dict[str, float], neighbours: dict[str, list[tuple[str, float]]],
                   degree: dict[str, float], *, damping: float, iterations: int,
                   tolerance: float) -> dict[str, float]:
    """GDS's PageRank (delta push from the restart mass ``(1 - damping) * weight``; a node passes
    ``damping * delta * w / degree`` along each edge of weight ``w``) on the nodes whose neighbours are known;
    the others keep what reaches them."""
    rank = {n: (1 - damping) * w for n, w in restart.items()}
    delta = dict(rank)
    for _ in range(iterations):
        nxt: dict[str, float] = {}
        for node, mass in delta.items():
            deg = degree.get(node, 0.0)
            if mass <= tolerance or deg <= 0 or node not in neighbours:
                continue
            for other, w in neighbours[node]:
                nxt[other] = nxt.get(other, 0.0) + damping * mass * w / deg
        if not nxt:
            break
        for node, mass in nxt.items():
            rank[node] = rank.get(node, 0.0) + mass
        delta = nxt
    return rank


class MemoryGraph:
    """The graph ``ppr_project.cypher`` projects (the same nodes, edges and weights), held by the client for
    engine ``"memory"``: node ids, which of them are chunks, and the weighted adjacency as compressed rows, each
    undirected edge stored in both directions. :meth:`pagerank` is :func:`local_pagerank` over the whole graph,
    one vectorised push per iteration, with exact restart weights.

    Example::

        graph = MemoryGraph(store.read(PPR_EDGES, mention_weight=1.0, fact_weight=1.0, reference_weight=1.0)[0])
        rank = graph.pagerank({"e:newburgh": 1.0}, damping=0.5, iterations=20, tolerance=1e-4)
        graph.top_chunks(rank, 5)  # [(chunk_id, score), ...]
    """

    def __init__(self, row: PPREdgesRow) -> None:
        index: dict[str, int] = {}
        chunk: list[bool] = []
        for node, is_chunk in zip(row["ids"], row["chunks"], strict=True):
            if node not in index:
                index[node] = len(chunk)
                chunk.append(bool(is_chunk))
        source: list[int] = []
        target: list[int] = []
        weight: list[float] = []
        for node, targets, weights in zip(row["ids"], row["targets"], row["weights"], strict=True):
            i = index[node]
            for other, w in zip(targets, weights, strict=True):
                if other in index and w > 0:
                    source.append(i)
                    target.append(index[other])
                    weight.append(float(w))
        n = len(chunk)
        src = np.array(source + target, dtype=np.int64)
        dst = np.array(target + source, dtype=np.int64)
        w_all = np.array(weight + weight, dtype=np.float64)
        order = np.argsort(src, kind="stable")
        src, dst, w_all = src[order], dst[order], w_all[order]
        degree = np.bincount(src, weights=w_all, minlength=n)
        self.ids = list(index)
        self.index = index
        self.chunk = np.array(chunk, dtype=bool)
        self.edges = len(weight)
        self._count = np.bincount(src, minlength=n)
        self._start = np.concatenate(([0], np.cumsum(self._count)[:-1])).astype(np.int64)
        self._target = dst
        self._share = w_all / degree[src] if len(src) else w_all  # the part of a node's mass an edge carries

    def pagerank(self, restart: dict[str, float], *, damping: float, iterations: int,
                 tolerance: float) -> np.ndarray:
        """Each node's mass (indexed like :attr:`ids`): :func:`local_pagerank`'s push from the restart mass
        ``(1 - damping) * weight``, every node's neighbours known; seeds not in the graph are left out."""
        n = len(self.ids)
        rank: np.ndarray = np.zeros(n)
        for node, w in restart.items():
            i = self.index.get(node)
            if i is not None:
                rank[i] = (1 - damping) * w
        delta: np.ndarray = rank.copy()
        for _ in range(iterations):
            active = np.flatnonzero((delta > tolerance) & (self._count > 0))
            if not active.size:
                break
            counts = self._count[active]
            before = np.cumsum(counts) - counts
            edges = np.repeat(self._start[active] - before, counts) + np.arange(int(counts.sum()))
            mass = np.repeat(damping * delta[active], counts) * self._share[edges]
            delta = np.bincount(self._target[edges], weights=mass, minlength=n)
            rank += delta
        return rank

    def top_chunks(self, rank: np.ndarray, depth: int) -> list[tuple[str, float]]:
        """The ``depth`` chunks of highest mass (ties by id), mass > 0."""
        found = np.flatnonzero(self.chunk & (rank > 0))
        if found.size > depth:
            found = found[np.argpartition(-rank[found], depth - 1)[:depth]]
        return sorted(((self.ids[i], float(rank[i])) for i in found), key=lambda x: (-x[1], x[0]))[:depth]


_MEMORY: dict[tuple[object, object], tuple[str, MemoryGraph]] = {}
_MEMORY_LOCK = threading.Lock()


def memory_graph(store: GraphStore, name: str, weights: dict[str, float]) -> MemoryGraph:
    """The client-held graph ``name`` (a projection name: the graph's fingerprint) of ``store``'s database, read
    now unless this process holds it already; the one held before for that database is let go."""
    key = (getattr(store, "uri", None) or id(store), getattr(store, "database", None))
    with _MEMORY_LOCK:
        held = _MEMORY.get(key)
        if held is not None and held[0] == name:
            return held[1]
        graph = MemoryGraph(store.read(PPR_EDGES, **weights)[0])
        _MEMORY[key] = (name, graph)
        log.info("ppr graph read", extra={"graph": name, "nodes": len(graph.ids), "edges": graph.edges})
        return graph


class PPRRetriever(Retriever):
    """Personalised PageRank from question seeds over chunks and entities (see the module docstring)."""

    name = "ppr"

    def __init__(self, store: GraphStore, embedder: Embedder, *, damping: float = 0.5,
                 passage_weight: float = 0.05, fact_seeds: int = 5, fact_candidates: int = 20,
                 entity_candidates: int = 20, passage_candidates: int = 50, mention_weight: float = 1.0,
                 fact_weight: float = 1.0, reference_weight: float = 1.0, levels: int = 3, iterations: int = 20,
                 tolerance: float = 1e-4, engine: str = "auto", memory_nodes: int = 0, concurrency: int = 1,
                 hops: int = 3, fanout: int = 50, weighted: bool = True,
                 common_terms: CommonTermRule | None = CommonTermRule()) -> None:
        self.store, self.embedder = store, embedder
        self.common_terms = shared_common_terms(store, common_terms)
        self.damping, self.passage_weight = damping, passage_weight
        self.fact_seeds, self.fact_candidates = fact_seeds, fact_candidates
        self.entity_candidates, self.passage_candidates = entity_candidates, passage_candidates
        self.weights = {"mention_weight": mention_weight, "fact_weight": fact_weight,
                        "reference_weight": reference_weight}
        self.levels, self.iterations, self.tolerance = levels, iterations, tolerance
        self.engine, self.memory_nodes, self.concurrency = engine, memory_nodes, concurrency
        self.hops, self.fanout = hops, fanout
        self.weighted = weighted
        self._gds: bool | None = None
        self._weighted: bool | None = None
        self._graph: str | None = None  # the projection this retriever last found or made
        self._lock = threading.Lock()

    # -- where PageRank runs --------------------------------------------------------------------------------
    def uses_gds(self) -> bool:
        """Whether this retriever may run PageRank in GDS (``engine`` "gds", or "auto" on a server that has
        it, for a graph of more than ``memory_nodes`` nodes); "gds" on a server without GDS raises."""
        if self._gds is None:
            row = self.store.read(PPR_GDS)[0] if self.engine in ("auto", "gds") else None
            present = row is not None and bool(row["present"])
            if self.engine == "gds" and not present:
                raise RetrievalError(NO_GDS.split(";")[0] + "; choose engine 'auto', 'memory' or 'cypher'")
            self._gds = present
            self._weighted = present and row is not None and bool(row["weighted"])
        return self._gds

    def uses_weighted(self) -> bool:
        """Whether PageRank in GDS runs once with each seed's own restart weight (Strata's ``strata.ppr.stream``
        on the server, and ``weighted``), rather than once per seed weight group."""
        return self.weighted and self.uses_gds() and bool(self._weighted)

    def engine_for(self, nodes: int) -> str:
        """Where PageRank runs on a graph of ``nodes`` chunks and entities: "memory" (in this process, on the
        graph read once), "gds" or "cypher" (the fallback). "auto": in memory up to ``memory_nodes`` nodes (none
        by default), else in GDS when the server has it, else the fallback (with a warning)."""
        if self.engine != "auto":
            if self.engine == "gds":
                self.uses_gds()  # raises without GDS
            return self.engine
        if nodes <= self.memory_nodes:
            return "memory"
        if self.uses_gds():
            return "gds"
        warnings.warn(NO_GDS, RuntimeWarning, stacklevel=3)
        log.warning("ppr without GDS", extra={"reason": NO_GDS})
        return "cypher"

    def graph_name(self, version: Sequence[int | str] | None = None) -> str:
        """The name of the projection of the graph at ``version`` (``ppr_seeds``' counts and newest load; read
        now when not given), a fingerprint of it and of the edge weights."""
        if version is None:
            version = self._read_seeds(None, "")[0]["version"]
        key = repr((list(version), sorted(self.weights.items())))
        return GRAPH_PREFIX + hashlib.sha1(key.encode()).hexdigest()[:16]

    def ensure_projection(self, name: str | None = None) -> str:
        """The projection ``name`` (by default: of the current graph), projected now if the catalog lacks it
        (stale projections of this server's ppr are dropped)."""
        name = name or self.graph_name()
        with self._lock:
            existing = [r["graph"] for r in self.store.read(PPR_GRAPHS, prefix=GRAPH_PREFIX)]
            if name not in existing:
                try:
                    report = self.store.read(PPR_PROJECT, graph=name, **self.weights)[0]
                    log.info("ppr projection", extra={**report})
                except QueryError as exc:
                    if "already exists" not in str(exc):  # another session projected it meanwhile
                        raise
            for stale in existing:
                if stale != name:
                    self.store.read(PPR_DROP, graph=stale)
            self._graph = name
        return name

    # -- retrieval ------------------------------------------------------------------------------------------
    def _read_seeds(self, vector: list[float] | None, question: str) -> list[PPRSeedsRow]:
        return self.store.read(PPR_SEEDS, vector=vector, query=self.common_terms.query(question), question=question,
                               fact_candidates=self.fact_candidates, entity_candidates=self.entity_candidates,
                               passage_candidates=self.passage_candidates)

    def seeds(self, question: str, vector: list[float]) -> tuple[Seeds, str]:
        """The question's seeds, and the name of the projection of the graph as it is now (one round trip)."""
        seeds, graph, _ = self._seeds(question, vector)
        return seeds, graph

    def _seeds(self, question: str, vector: list[float]) -> tuple[Seeds, str, int]:
        row = self._read_seeds(vector, question)[0]
        seeds = seed_weights(row["seeds"], fact_seeds=self.fact_seeds, passage_weight=self.passage_weight)
        nodes = int(row["version"][0]) + int(row["version"][1])  # chunks + entities: the projected nodes
        return seeds, self.graph_name(row["version"]), nodes

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        vector = query_vector(self.embedder, question)
        seeds, graph, nodes = self._seeds(question, vector)
        if not seeds.all():
            return []
        engine = self.engine_for(nodes)
        if engine == "memory":
            scores = self._rank_memory(seeds, graph, k, where)
        elif engine == "gds":
            scores = self._rank_gds(seeds, graph, k, where)
        else:
            scores = self._rank_local(seeds, k, where)
        return self._hits(scores, seeds)

    def _rank_memory(self, seeds: Seeds, graph: str, k: int, where: RetrievalFilter | None
                     ) -> list[tuple[str, float]]:
        held = memory_graph(self.store, graph, self.weights)
        rank = held.pagerank({s.id: s.weight for s in seeds.all()}, damping=self.damping,
                             iterations=self.iterations, tolerance=self.tolerance)
        ranked = held.top_chunks(rank, max(500, 10 * k) if where is not None else k)
        if where is None:
            return ranked
        allowed = {r["chunk_id"] for r in self.store.read(PPR_FILTER, ids=[n for n, _ in ranked],
                                                          **filter_params(where))}
        return [(n, s) for n, s in ranked if n in allowed][:k]

    def _rank_gds(self, seeds: Seeds, graph: str, k: int, where: RetrievalFilter | None
                  ) -> list[tuple[str, float]]:
        # The catalog is only consulted when the graph changed since this retriever's last query (or the
        # projection went missing: a server restart, or another session that saw a newer graph dropped it).
        if graph != self._graph:
            self.ensure_projection(graph)
        common = dict(graph=graph, damping=self.damping, iterations=self.iterations, tolerance=self.tolerance,
                      k=k, **filter_params(where))
        if self.uses_weighted():
            # The procedure ranks chunks only, so without filters the k best are all the query needs.
            query = PPR_RANK_WEIGHTED
            params = dict(common, chunks=[{"id": s.id, "weight": s.weight} for s in seeds.chunks.values()],
                          entities=[{"id": s.id, "weight": s.weight} for s in seeds.entities.values()],
                          depth=k if where is None else max(500, 10 * k))
        else:
            query = PPR_RANK
            params = dict(common, groups=seed_groups(seeds.all(), self.levels), concurrency=self.concurrency,
                          depth=max(500, 10 * k))
        try:
            rows = self.store.read(query, **params)
        except QueryError as exc:
            if "does not exist" not in str(exc):
                raise
            self.ensure_projection(graph)
            rows = self.store.read(query, **params)
        return [(r["chunk_id"], float(r["score"])) for r in rows]

    def _rank_local(self, seeds: Seeds, k: int, where: RetrievalFilter | None) -> list[tuple[str, float]]:
        restart = {s.id: s.weight for s in seeds.all()}
        neighbours: dict[str, list[tuple[str, float]]] = {}
        degree: dict[str, float] = {}
        frontier = list(restart)
        for _ in range(self.hops):
            todo = [n for n in frontier if n not in neighbours]
            if not todo:
                break
            frontier = []
            for r in self.store.read(PPR_NEIGHBOURS, ids=todo, fanout=self.fanout, **self.weights):
                neighbours[r["id"]] = [(n["id"], float(n["weight"])) for n in r["neighbours"]]
                degree[r["id"]] = float(r["degree"])
                frontier += [n for n, _ in neighbours[r["id"]]]
        rank = local_pagerank(restart, neighbours, degree, damping=self.damping, iterations=self.iterations,
                              tolerance=self.tolerance)
        # Chunks are what is ranked: the filter query keeps the chunks (of the allowed documents).
        ranked = sorted(rank.items(), key=lambda x: (-x[1], x[0]))[:max(500, 10 * k)]
        allowed = {r["chunk_id"] for r in self.store.read(PPR_FILTER, ids=[n for n, _ in ranked],
                                                          **filter_params(where))}
        return [(n, s) for n, s in ranked if n in allowed][:k]

    def _hits(self, scores: list[tuple[str, float]], seeds: Seeds) -> list[Hit]:
        """The ranked chunks as hits, each explained (one round trip): itself a seed, or the shortest way from
        an entity seed (through a mention, or a fact and a mention) or from a seed passage (through a title
        reference)."""
        if not scores:
            return []
        rows = {r["chunk_id"]: r for r in self.store.read(PPR_PATHS, ids=[c for c, _ in scores],
                                                          entity_seeds=list(seeds.entities),
                                                          chunk_seeds=list(seeds.chunks))}
        hits = []
        for chunk_id, score in scores:
            row = rows.get(chunk_id)
            if row is None:  # deleted since it was ranked
                continue
            via, via_id = self._explain(row, seeds)
            chunk = ScoredChunkRow(chunk_id=chunk_id, text=row["text"], document_id=row["document_id"],
                                   title=row["title"], source=row["source"], page=row["page"],
                                   char_start=row["char_start"], char_end=row["char_end"],
                                   sentences=row["sentences"], score=score)
            hits.append(hit_from_row(chunk, [HitSource(path="ppr", score=score, via=via, via_id=via_id)]))
        return hits

    @staticmethod
    def _explain(row: PPRPathRow, seeds: Seeds) -> tuple[str, str | None]:
        chunk_id = row["chunk_id"]
        if chunk_id in seeds.chunks:
            return f"seed: {seeds.chunks[chunk_id].why}", chunk_id
        if row["seed_id"] is None or row["path"] is None:
            return "spread from the seeds", None
        seed = seeds.entities.get(row["seed_id"]) or seeds.chunks.get(row["seed_id"])
        why = seed.why if seed is not None else row["seed_id"]
        return f"seed: {why} > " + " > ".join(row["path"]), row["seed_id"]
