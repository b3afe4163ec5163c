"""(f) KG2RAG (Zhu et al., 2025), sections 2.2-2.3: KG-guided chunk expansion and KG-based organisation.

Expansion: seed chunks (chunk vector top-k) -> the entities they mention -> m hops over the entity graph
through reified facts, ``(e)<-[:SUBJECT|OBJECT]-(f:Fact)-[:SUBJECT|OBJECT]->(e2)`` (one Cypher query per
hop, ``kg2rag_hop.cypher``) -> the chunks of the facts reached, each with its relevance (raw cosine of the
chunk to the query). A reached chunk's hit explains how it was reached: the seed, then each entity on the
way (``hop`` source, e.g. ``"Arthur's Magazine > Timothy Shay Arthur"``).

Organisation (a filter and an orderer): facts form an undirected weighted multigraph over entities, the
weight of a fact being its chunk's relevance. Each connected component keeps its maximum spanning tree
(Kruskal), which drops redundant links between the same entities. A component's text is its chunks in
depth-first order from the heaviest edge, one coherent paragraph; its triple text (``h r t; ...``) is
scored against the query (embedding similarity, or a cross-encoder ``reranker`` hook), and components are
taken best first until the chunk budget is filled. Seeds that mention no fact become one-chunk components,
so expansion never loses a seed; their text is scored by the same function as the triple texts, so that
one sort compares like with like (a cross-encoder's scale is not a cosine's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kg.embeddings import Embedder
from kg.retrieval.base import Hit, HitSource, RetrievalFilter, Retriever
from kg.retrieval.common import filter_params, hit_from_row, hits_by_id, query_vector
from kg.retrieval.methods.chunk import chunk_vector_hits
from kg.shared.disjoint_sets import DisjointSets
from kg.store.base import GraphStore
from kg.store.queries import KG2RAG_HOP, KG2RAG_SEED_ENTITIES

__all__ = ["Component", "FactEdge", "KG2RAGRetriever", "Reranker", "maximum_spanning_forest", "organise",
           "paragraph_order"]

Reranker = Callable[[str, Sequence[str]], Sequence[float]]
"""A cross-encoder hook: ``(query, texts) -> one relevance per text`` (higher is better)."""


@dataclass(frozen=True)
class FactEdge:
    """A reified fact as an edge between its subject and object entities, weighted by its chunk's relevance."""

    fact_id: str
    text: str
    subject_id: str
    object_id: str
    chunk_id: str
    weight: float
    # How expansion reached the fact: the seed chunk's title, then the entities walked (the last one is
    # ``entity_id``, an end of this fact).
    trail: tuple[str, ...] = ()
    entity_id: str | None = None


@dataclass
class Component:
    """One connected component after filtering: its spanning-tree facts and its chunks as one paragraph."""

    facts: list[FactEdge]
    chunk_ids: list[str]
    relevance: float = 0.0
    triples: str = field(init=False)

    def __post_init__(self) -> None:
        self.triples = "; ".join(f.text for f in self.facts)


def maximum_spanning_forest(edges: Sequence[FactEdge]) -> list[list[FactEdge]]:
    """The maximum spanning tree of each connected component (Kruskal; ties broken by fact id), each
    component's tree edges heaviest first; components ordered by their heaviest edge."""
    components = DisjointSets[str]()
    # An edge joining entities already connected is a self-loop or closes a cycle: a redundant link.
    tree = [edge for edge in sorted(edges, key=lambda e: (-e.weight, e.fact_id))
            if components.union(edge.subject_id, edge.object_id)]
    groups: dict[str, list[FactEdge]] = {}
    for edge in tree:
        groups.setdefault(components.find(edge.subject_id), []).append(edge)
    return sorted(groups.values(), key=lambda g: (-g[0].weight, g[0].fact_id))


def paragraph_order(tree: Sequence[FactEdge]) -> list[str]:
    """The tree's chunks in depth-first order from its heaviest edge, each chunk once."""
    if not tree:
        return []
    adjacent: dict[str, list[FactEdge]] = {}
    for edge in tree:
        adjacent.setdefault(edge.subject_id, []).append(edge)
        adjacent.setdefault(edge.object_id, []).append(edge)
    root = max(tree, key=lambda e: (e.weight, e.fact_id))
    order: list[str] = []
    done: set[str] = set()
    stack: list[FactEdge] = [root]
    while stack:
        edge = stack.pop()
        if edge.fact_id in done:
            continue
        done.add(edge.fact_id)
        if edge.chunk_id not in order:
            order.append(edge.chunk_id)
        nexts = [e for node in (edge.subject_id, edge.object_id) for e in adjacent[node] if e.fact_id not in done]
        stack.extend(sorted(nexts, key=lambda e: (e.weight, e.fact_id)))  # heaviest popped first
    return order


def organise(edges: Sequence[FactEdge], score: Callable[[Sequence[str]], Sequence[float]], *,
             budget: int, singletons: Sequence[tuple[str, str]] = ()) -> list[Component]:
    """Filter and order: spanning trees, one paragraph per component, components by ``score`` of their
    triple text, taken until ``budget`` chunks; ``singletons`` are ``(chunk_id, text)`` of seeds, and
    those outside every component are scored by ``score`` of their text."""
    components = [Component(tree, paragraph_order(tree)) for tree in maximum_spanning_forest(edges)]
    covered = {c for comp in components for c in comp.chunk_ids}
    lone = [(chunk, text) for chunk, text in dict(singletons).items() if chunk not in covered]
    texts = [c.triples for c in components] + [text for _, text in lone]
    components += [Component([], [chunk]) for chunk, _ in lone]
    if components:
        for component, value in zip(components, score(texts), strict=True):
            component.relevance = float(value)
    components.sort(key=lambda c: -c.relevance)
    chosen: list[Component] = []
    used: set[str] = set()
    for component in components:
        if len(used) >= budget:
            break
        component.chunk_ids = [c for c in component.chunk_ids if c not in used][:budget - len(used)]
        if component.chunk_ids:
            used.update(component.chunk_ids)
            chosen.append(component)
    return chosen


class KG2RAGRetriever(Retriever):
    """Seed chunks, KG-guided m-hop expansion, MST organisation (see the module docstring).

    Example::

        kg2rag = KG2RAGRetriever(store, embedder, hops=1, seeds=5)
        for component in kg2rag.retrieve_organised("Who ...?", k=8):
            print(component.relevance, component.triples, component.chunk_ids)
    """

    name = "kg2rag"

    def __init__(self, store: GraphStore, embedder: Embedder, *, hops: int = 1, seeds: int = 5,
                 max_facts: int = 200, hub_facts: int | None = 2000, reranker: Reranker | None = None) -> None:
        self.store, self.embedder = store, embedder
        self.hops, self.seeds, self.max_facts, self.reranker = hops, seeds, max_facts, reranker
        self.hub_facts = hub_facts

    def _expand(self, vector: list[float], seeds: Sequence[Hit], where: RetrievalFilter | None) -> list[FactEdge]:
        order = {h.chunk_id: n for n, h in enumerate(seeds)}
        rows = self.store.read(KG2RAG_SEED_ENTITIES, chunk_ids=list(order))
        # trail[e]: how entity e was reached (seed title, entity names); the best seed that mentions it wins
        trail: dict[str, tuple[str, ...]] = {}
        for e in sorted(rows, key=lambda r: (order[r["chunk_id"]], r["entity_id"])):
            trail.setdefault(e["entity_id"], (seeds[order[e["chunk_id"]]].title, e["name"] or e["entity_id"]))
        frontier = list(trail)
        facts: dict[str, FactEdge] = {}
        params = filter_params(where)
        for _ in range(self.hops):
            if not frontier:
                break
            hops = self.store.read(KG2RAG_HOP, entity_ids=frontier, vector=vector,
                                   max_facts=self.max_facts, hub_facts=self.hub_facts, **params)
            ends = set(frontier)
            frontier = []
            for r in hops:
                pair = ((r["subject_id"], r["subject"]), (r["object_id"], r["object"]))
                origin = min((e for e, _ in pair if e in ends), key=lambda e: (len(trail[e]), e))
                facts.setdefault(r["fact_id"], FactEdge(r["fact_id"], r["text"] or "", r["subject_id"],
                                                        r["object_id"], r["chunk_id"], float(r["relevance"]),
                                                        trail[origin], origin))
                for entity, name in pair:
                    if entity not in trail:
                        trail[entity] = (*trail[origin], name or entity)
                        frontier.append(entity)
        return list(facts.values())

    def retrieve_organised(self, question: str, *, k: int = 8,
                           where: RetrievalFilter | None = None) -> tuple[list[Component], list[Hit]]:
        """The chosen components, best first, and the seed hits."""
        vector = query_vector(self.embedder, question)
        seeds = chunk_vector_hits(self.store, vector, k=self.seeds, where=where)
        edges = self._expand(vector, seeds, where)

        def score(texts: Sequence[str]) -> Sequence[float]:
            if self.reranker is not None:
                return self.reranker(question, texts)
            return [float(x) for x in self.embedder.embed(list(texts)) @ np.asarray(vector, dtype=np.float32)]

        return organise(edges, score, budget=k, singletons=[(h.chunk_id, h.text) for h in seeds]), seeds

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        components, seeds = self.retrieve_organised(question, k=k, where=where)
        ids = [c for comp in components for c in comp.chunk_ids]
        rows = hits_by_id(self.store, ids, None)
        seed_ids = {h.chunk_id: h.score for h in seeds}
        hits: list[Hit] = []
        for comp in components:
            via = {f.chunk_id: f for f in comp.facts}
            for chunk_id in comp.chunk_ids:
                fact = via.get(chunk_id)
                sources = [HitSource(path="kg2rag", score=comp.relevance, via=fact.text if fact else None,
                                     via_id=fact.fact_id if fact else None)]
                if chunk_id in seed_ids:
                    sources.insert(0, HitSource(path="chunk", score=seed_ids[chunk_id]))
                elif fact is not None:  # reached by expansion: from which seed, through which entities
                    sources.append(HitSource(path="hop", score=fact.weight, via=" > ".join(fact.trail),
                                             via_id=fact.entity_id))
                hits.append(hit_from_row({**rows[chunk_id], "score": comp.relevance}, sources))
        return hits
