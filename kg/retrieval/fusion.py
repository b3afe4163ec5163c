"""Rank fusion: calibrated (z-score), normalised linear and reciprocal-rank fusion of ranked lists.

``cypher/retrieval/hybrid.cypher`` fuses its paths in the database with the same formulas; these functions
fuse lists that come from separate queries (e.g. the default ``strata`` method) and document the maths:

* zscore (calibrated, the default of ``hybrid``): ``score(d) = sum_p w_p * (s_p(d) - min_p) / sd_p``, the
  standard deviation ``sd_p`` of the path's returned scores (a path that returned fewer results than it was
  asked for counts the others as 0): each path's scores on one scale, in how many deviations a result
  stands above the path's list. A path's weight is then what it is worth: RRF gives a
  weak path's first result as much as a strong path's, whatever its score, and this is how a weak dense
  signal dragged a good lexical ranking down (docs/retrieval.md has the measurements).
* linear: ``score(d) = sum_p w_p * (s_p(d) - min_p) / (max_p - min_p)``.
* RRF (Cormack et al., 2009): ``score(d) = sum_p w_p / (k + rank_p(d))``, ranks from 1; scores are ignored.

In zscore and linear a path whose scores are all equal contributes ``w_p``; a chunk a path did not return
contributes 0 for that path (as much as the path's lowest).

>>> rrf({"a": ["x", "y"], "b": ["y"]}, k=60)["y"] == 1 / 62 + 1 / 61
True
>>> zscore({"a": [("x", 3.0), ("y", 1.0)]})
{'x': 2.0, 'y': 0.0}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from kg.retrieval.base import Hit, HitSource

__all__ = ["Fusion", "fuse", "fuse_hits", "linear", "rrf", "zscore"]

Fusion = Literal["zscore", "linear", "rrf"]


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


def zscore(scored: Mapping[str, Sequence[tuple[str, float]]], *, weights: Mapping[str, float] | None = None,
           depth: int = 0) -> dict[str, float]:
    """Weighted sum of ``path -> [(id, score)]`` scores above the path's lowest, in standard deviations of
    the path's scores (population deviation, as the Cypher computes it). A path that returned fewer than
    ``depth`` results (the number it was asked for) counts the missing ones as scoring 0: no match, which
    a lone lexical match then stands far above."""
    out: dict[str, float] = {}
    for path, pairs in scored.items():
        if not pairs:
            continue
        weight = 1.0 if weights is None else weights.get(path, 1.0)
        values = [s for _, s in pairs]
        unmatched = max(depth - len(values), 0)
        floor = 0.0 if unmatched and min(values) > 0 else min(values)
        mean = sum(values) / (len(values) + unmatched)
        deviation = math.sqrt((sum((v - mean) ** 2 for v in values) + unmatched * mean**2)
                              / (len(values) + unmatched))
        for item, score in pairs:
            norm = (score - floor) / deviation if deviation > 0 else 1.0
            out[item] = out.get(item, 0.0) + weight * norm
    return out


def fuse(scored: Mapping[str, Sequence[tuple[str, float]]], *, method: Fusion = "rrf", rrf_k: float = 60.0,
         weights: Mapping[str, float] | None = None, depth: int = 0) -> list[tuple[str, float]]:
    """Fuse ``path -> [(id, score)] best first`` and return ``(id, fused)`` best first (ties by id);
    ``depth``: the number of results each path was asked for (zscore, see :func:`zscore`)."""
    if method == "rrf":
        fused = rrf({p: [i for i, _ in pairs] for p, pairs in scored.items()}, k=rrf_k, weights=weights)
    elif method == "zscore":
        fused = zscore(scored, weights=weights, depth=depth)
    else:
        fused = linear(scored, weights=weights)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def fuse_hits(lists: Mapping[str, Sequence[Hit]], *, k: int, method: Fusion = "rrf", rrf_k: float = 60.0,
              weights: Mapping[str, float] | None = None, depth: int = 0,
              followers: Mapping[str, Sequence[Hit]] | None = None) -> list[Hit]:
    """Fuse ranked hit lists from separate paths: one hit per chunk, carrying every path's sources, scored
    by the fused score; a chunk repeated within a list counts at its first (best) rank. ``followers``: hits
    placed right after a given chunk, wherever the fusion put them, with its score (a bridge's second hop
    after its first: :mod:`kg.retrieval.methods.strata`). The given hits are not changed; only the ``k``
    returned are copied (deep copies of every candidate were most of the time ``strata`` spent in Python)."""
    first: dict[str, Hit] = {}
    sources: dict[str, list[HitSource]] = {}
    scored: dict[str, list[tuple[str, float]]] = {}
    for path, hits in {**lists, "": [h for after in (followers or {}).values() for h in after]}.items():
        order: dict[str, float] = {}
        for hit in hits:
            first.setdefault(hit.chunk_id, hit)
            sources.setdefault(hit.chunk_id, []).extend(hit.sources)  # HitSource is frozen: shared safely
            order.setdefault(hit.chunk_id, hit.score)
        if path:
            scored[path] = list(order.items())
    fused = fuse(scored, method=method, rrf_k=rrf_k, weights=weights, depth=depth)
    if followers:
        fused = _followed(fused, {i: [h.chunk_id for h in after] for i, after in followers.items()}, k)
    return [first[i].model_copy(update={"score": s, "sources": sources[i], "sentences": list(first[i].sentences)})
            for i, s in fused[:k]]


def _followed(fused: Sequence[tuple[str, float]], followers: Mapping[str, Sequence[str]],
              k: int) -> list[tuple[str, float]]:
    """The first ``k`` of ``fused`` with each id's followers right after it (and theirs after them), once each."""
    out: list[tuple[str, float]] = []
    placed: set[str] = set()
    for item, score in fused:
        due = [item]
        while due and len(out) < k:
            current = due.pop(0)
            if current in placed:
                continue
            placed.add(current)
            out.append((current, score))
            due[:0] = [f for f in followers.get(current, ()) if f not in placed]
        if len(out) >= k:
            break
    return out
