"""Rank fusion: reciprocal-rank fusion and normalised linear fusion of ranked lists.

``cypher/retrieval/hybrid.cypher`` fuses its paths in the database with the same formulas; these functions
fuse lists that come from separate queries (e.g. the default ``strata`` method) and document the maths:

* RRF (Cormack et al., 2009): ``score(d) = sum_p w_p / (k + rank_p(d))``, ranks from 1; robust to paths
  whose scores live on different scales (cosine vs BM25).
* linear: ``score(d) = sum_p w_p * (s_p(d) - min_p) / (max_p - min_p)``; a path whose scores are all equal
  contributes ``w_p``. A chunk a path did not return contributes 0 for that path.

>>> rrf({"a": ["x", "y"], "b": ["y"]}, k=60)["y"] == 1 / 62 + 1 / 61
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from kg.retrieval.base import Hit

__all__ = ["Fusion", "fuse", "fuse_hits", "linear", "rrf"]

Fusion = Literal["rrf", "linear"]


def rrf(ranked: Mapping[str, Sequence[str]], *, k: float = 60.0,
        weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Reciprocal-rank fusion of ``path -> ids best first``."""
    out: dict[str, float] = {}
    for path, ids in ranked.items():
        weight = 1.0 if weights is None else weights.get(path, 1.0)
        for rank, item in enumerate(ids, start=1):
            out[item] = out.get(item, 0.0) + weight / (k + rank)
    return out


def linear(scored: Mapping[str, Sequence[tuple[str, float]]],
           *, weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Weighted sum of min-max normalised scores of ``path -> [(id, score)]``."""
    out: dict[str, float] = {}
    for path, pairs in scored.items():
        if not pairs:
            continue
        weight = 1.0 if weights is None else weights.get(path, 1.0)
        values = [s for _, s in pairs]
        top, bottom = max(values), min(values)
        for item, score in pairs:
            norm = (score - bottom) / (top - bottom) if top > bottom else 1.0
            out[item] = out.get(item, 0.0) + weight * norm
    return out


def fuse(scored: Mapping[str, Sequence[tuple[str, float]]], *, method: Fusion = "rrf", rrf_k: float = 60.0,
         weights: Mapping[str, float] | None = None) -> list[tuple[str, float]]:
    """Fuse ``path -> [(id, score)] best first`` and return ``(id, fused)`` best first (ties by id)."""
    if method == "rrf":
        fused = rrf({p: [i for i, _ in pairs] for p, pairs in scored.items()}, k=rrf_k, weights=weights)
    else:
        fused = linear(scored, weights=weights)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def fuse_hits(lists: Mapping[str, Sequence[Hit]], *, k: int, method: Fusion = "rrf", rrf_k: float = 60.0,
              weights: Mapping[str, float] | None = None) -> list[Hit]:
    """Fuse ranked hit lists from separate paths: one hit per chunk, carrying every path's sources, scored
    by the fused score; a chunk repeated within a list counts at its first (best) rank."""
    by_id: dict[str, Hit] = {}
    scored: dict[str, list[tuple[str, float]]] = {}
    for path, hits in lists.items():
        order: dict[str, float] = {}
        for hit in hits:
            if hit.chunk_id in by_id:
                by_id[hit.chunk_id].sources.extend(hit.sources)
            else:
                by_id[hit.chunk_id] = hit.model_copy(deep=True)
            order.setdefault(hit.chunk_id, hit.score)
        scored[path] = list(order.items())
    fused = fuse(scored, method=method, rrf_k=rrf_k, weights=weights)
    return [by_id[i].model_copy(update={"score": s}) for i, s in fused[:k]]
