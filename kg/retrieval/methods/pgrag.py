"""(g) PG-RAG's pseudo-graph retrieval (Liang et al., 2024, section 4): a walk over mind maps.

1. Key points: an LLM turns the question into answer key points; offline, the question is the key point.
2. Anchors: each key point finds fact items through the FactItem vector index (raw cosine >= threshold).
3. Walk up (control matrix): from an anchor, each ancestor on its mind-map path gets a weight from
   ``diff = sim(anchor) - sim(node)`` (similarities to the key point): 1 when ``diff < support``
   (it supports the anchor), 0.5 when ``diff < ambiguity`` (ambiguous), else 0 and the walk stops. The last
   node with a non-zero weight is the anchor's upper parent.
4. Walk down (path matrix): every row (topic-to-item path) through that parent is coloured from the parent
   downwards with ``weight * sim(node)``, a row stopping at its first rejected node.
5. Aggregation: colours from every anchor and key point add up; rows (fact paths) with the highest totals
   are returned as a mind-map context, and their fact items' chunks as hits.

Topics and routes are scored by the exact cosine of the vectors stored on them (their path text's); a node stored
without one (a route of a graph distilled before routes were embedded) by embedding its path text at query time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kg.embeddings import Embedder
from kg.llm import KEY_POINTS, LLM, KeyPoints
from kg.retrieval.base import Hit, HitSource, RetrievalFilter, Retriever
from kg.retrieval.common import filter_params, hit_from_row, hits_by_id, query_vector
from kg.store.base import GraphStore
from kg.store.queries import PGRAG_ANCHORS, PGRAG_SUBTREE, AnchorRow, PathNode

__all__ = ["FactPath", "KeyPoints", "MindMapContext", "PGRAGRetriever", "render_mind_map", "upper_index", "walk"]


@dataclass
class FactPath:
    """One mind-map row from the topic to a fact item, with its aggregated contribution."""

    ids: list[str]
    texts: list[str]
    chunk_id: str
    score: float = 0.0


@dataclass
class MindMapContext:
    key_points: list[str]
    paths: list[FactPath] = field(default_factory=list)

    @property
    def text(self) -> str:
        return render_mind_map(self.paths)


def _weight(diff: float, support: float, ambiguity: float) -> float:
    if diff < support:
        return 1.0
    if diff < ambiguity:
        return 0.5
    return 0.0


def upper_index(path: Sequence[str], sims: Mapping[str, float], *, support: float, ambiguity: float) -> int:
    """Position of the anchor's upper parent on its path (the anchor is ``path[-1]``): the walk goes up
    while the next ancestor supports (or ambiguously supports) the anchor."""
    base = sims.get(path[-1], 0.0)
    upper = len(path) - 1
    while upper > 0 and _weight(base - sims.get(path[upper - 1], 0.0), support, ambiguity) > 0:
        upper -= 1
    return upper


def walk(rows: Sequence[Sequence[str]], sims: Mapping[str, float], anchors: Sequence[str], *,
         support: float = 0.03, ambiguity: float = 0.05) -> list[float]:
    """Total contribution of each row (a list of node ids from the root to a fact item) after walking from
    each anchor (a fact item id ending some row): up to its upper parent, then down every row through it."""
    totals = [0.0] * len(rows)
    for anchor in anchors:
        own = next((r for r in rows if r and r[-1] == anchor), None)
        if own is None:
            continue
        base = sims.get(anchor, 0.0)

        def weight(node: str, base: float = base) -> float:
            return _weight(base - sims.get(node, 0.0), support, ambiguity)

        upper = upper_index(own, sims, support=support, ambiguity=ambiguity)
        parent = own[upper]
        for i, row in enumerate(rows):
            if len(row) <= upper or row[upper] != parent:
                continue
            for node in row[upper:]:
                w = weight(node)
                if w == 0:
                    break
                totals[i] += w * sims.get(node, 0.0)
    return totals


def render_mind_map(paths: Sequence[FactPath]) -> str:
    """The selected fact paths merged into one indented mind map (shared prefixes printed once)."""
    lines: list[str] = []
    printed: set[tuple[str, ...]] = set()
    for path in paths:
        for depth in range(len(path.ids)):
            prefix = tuple(path.ids[:depth + 1])
            if prefix not in printed:
                printed.add(prefix)
                lines.append("  " * depth + "- " + path.texts[depth])
    return "\n".join(lines)


class PGRAGRetriever(Retriever):
    """The pseudo-graph walk (see the module docstring).

    Example::

        pg = PGRAGRetriever(store, embedder)
        context = pg.retrieve_mind_map("What flood measures did Beijing take?", k=5)
        print(context.text)
    """

    name = "pgrag"

    def __init__(self, store: GraphStore, embedder: Embedder, *, llm: LLM | None = None, anchors: int = 5,
                 threshold: float = 0.0, support: float = 0.03, ambiguity: float = 0.05) -> None:
        self.store, self.embedder, self.llm = store, embedder, llm
        self.anchors, self.threshold = anchors, threshold
        self.support, self.ambiguity = support, ambiguity

    def key_points(self, question: str) -> list[str]:
        """LLM key points; offline (no LLM), the question itself."""
        if self.llm is None or self.llm.offline:
            return [question]
        out = self.llm.run(KEY_POINTS, question=question)
        return [p for p in out.points if p.strip()] or [question]

    def retrieve_mind_map(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> MindMapContext:
        points = self.key_points(question)
        params = filter_params(where)
        # ``self.anchors`` is a floor: a fixed count would cap the fact paths, and so the hits, below k.
        n_anchors = max(self.anchors, k)
        paths: dict[tuple[str, ...], FactPath] = {}
        for point in points:
            vector = query_vector(self.embedder, point)
            anchors = self.store.read(PGRAG_ANCHORS, vector=vector, k=n_anchors,
                                      candidates=max(4 * n_anchors, 20), threshold=self.threshold, **params)
            if not anchors:
                continue
            sims = {a["anchor_id"]: float(a["score"]) for a in anchors}
            uppers = self._uppers(anchors, sims, vector)
            rows = self.store.read(PGRAG_SUBTREE, ids=sorted(uppers), vector=vector, **params)
            sims.update({r["item_id"]: float(r["item_score"]) for r in rows})
            self._node_sims([n for r in rows for n in r["path"][:-1]], vector, sims)
            ids = [[n["id"] for n in r["path"]] for r in rows]
            totals = walk(ids, sims, list(dict.fromkeys(a["anchor_id"] for a in anchors)),
                          support=self.support, ambiguity=self.ambiguity)
            for row, row_ids, total in zip(rows, ids, totals, strict=True):
                if total <= 0:
                    continue
                key = tuple(row_ids)
                path = paths.setdefault(key, FactPath(row_ids, [n["text"] for n in row["path"]], row["chunk_id"]))
                path.score += total
        best = sorted(paths.values(), key=lambda p: (-p.score, p.ids))
        return MindMapContext(points, best[:max(k, 1) * 2])

    def _node_sims(self, nodes: Sequence[PathNode], vector: list[float], sims: dict[str, float]) -> None:
        """Similarity of topic and route nodes to the key point: their stored vector's, or their path text's."""
        sims.update({n["id"]: float(n["score"]) for n in nodes if n["score"] is not None})
        todo = {n["id"]: n["path_text"] or n["text"] for n in nodes if n["id"] not in sims}
        if todo:
            values = self.embedder.embed(list(todo.values())) @ np.asarray(vector, dtype=np.float32)
            sims.update({node: float(v) for node, v in zip(todo, values, strict=True)})

    def _uppers(self, anchors: Sequence[AnchorRow], sims: dict[str, float], vector: list[float]) -> set[str]:
        """Each anchor's upper parent (the walk up, on the anchor's own path)."""
        uppers: set[str] = set()
        for anchor in anchors:
            path = anchor["path"]
            self._node_sims(path[:-1], vector, sims)
            ids = [n["id"] for n in path]
            upper = upper_index(ids, sims, support=self.support, ambiguity=self.ambiguity)
            # The subtree query starts at a topic or route: an anchor no ancestor supports uses its parent.
            uppers.add(ids[min(upper, len(ids) - 2)] if len(ids) > 1 else ids[0])
        return uppers

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        context = self.retrieve_mind_map(question, k=k, where=where)
        rows = hits_by_id(self.store, list(dict.fromkeys(p.chunk_id for p in context.paths)), None)
        hits: dict[str, Hit] = {}
        for path in context.paths:
            source = HitSource(path="pgrag", score=path.score, via=" > ".join(path.texts), via_id=path.ids[-1])
            if path.chunk_id in hits:
                hits[path.chunk_id].sources.append(source)
            elif path.chunk_id in rows:
                hits[path.chunk_id] = hit_from_row({**rows[path.chunk_id], "score": path.score}, [source])
        return list(hits.values())[:k]
