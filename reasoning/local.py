"""Plain-Cypher implementations of the reasoning ports (``cypher/reasoning/*.cypher``).

They make every reasoning method runnable on a graph with only the corpus layer (and atoms, entities,
fact items or rows when present), and they are what the reasoning tests run against the real Neo4j.
Scores of vector paths are cosine similarities (Neo4j's ``(1 + cos) / 2`` mapped back).

Example::

    ports = local_ports(store, embedder, ReasoningSettings())
    hits = ports.hierarchical.retrieve("Who hosted Morning Edition?", k=8)
"""

from __future__ import annotations

import re
from typing import Any

from kg.embeddings import Embedder
from kg.graph.store import GraphStore, Record
from kg.retrieval.base import AtomCandidate, Hit, HitSource, RetrievalFilter
from reasoning.ports import Ports, TableInfo
from reasoning.settings import ReasoningSettings
from reasoning.types import Aggregation

__all__ = [
    "CypherAtomSearch",
    "CypherChunkVector",
    "CypherFulltextHybrid",
    "CypherHierarchical",
    "CypherKG2RAG",
    "CypherPGRAG",
    "CypherTables",
    "hit_from_record",
    "local_ports",
]

_WORD = re.compile(r"\w+", re.UNICODE)
_RRF = 60


def hit_from_record(row: Record, path: str, *, via: str | None = None, via_id: str | None = None) -> Hit:
    """A :class:`Hit` from a reasoning query row (the columns every ``cypher/reasoning`` query returns)."""
    score = float(row["score"])
    return Hit(
        chunk_id=row["chunk_id"], text=row["text"], document_id=row["document_id"], title=row["title"] or "",
        page=row["page"], char_start=int(row["char_start"] or 0), char_end=int(row["char_end"] or 0),
        score=score, sentences=list(row.get("sentences") or []),
        sources=[HitSource(path=path, score=score, via=via, via_id=via_id)],
    )


def _filter_params(where: RetrievalFilter | None) -> dict[str, Any]:
    return {
        "exclude": list(where.exclude_chunk_ids) if where else [],
        "document_ids": where.document_ids if where and where.document_ids else None,
    }


class CypherChunkVector:
    """Dense retrieval over the chunk vector index, keeping cosine >= ``threshold`` (R)."""

    def __init__(self, store: GraphStore, embedder: Embedder, *, threshold: float) -> None:
        self.store, self.embedder, self.threshold = store, embedder, threshold

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        params = _filter_params(where)
        rows = self.store.read(
            "reasoning/chunk_vector", vector=self.embedder.embed_one(question).tolist(), k=k,
            fetch=k + len(params["exclude"]) + 20, threshold=self.threshold, **params,
        )
        return [hit_from_record(r, "chunk") for r in rows]


class CypherAtomSearch:
    """Algorithm 1's atom search: atoms by cosine, then the ATOM_OF hop to their chunks."""

    def __init__(self, store: GraphStore, embedder: Embedder) -> None:
        self.store, self.embedder = store, embedder

    def candidates(
        self, query: str, *, k: int, threshold: float, exclude_chunk_ids: list[str]
    ) -> list[AtomCandidate]:
        rows = self.store.read(
            "reasoning/atom_candidates", vector=self.embedder.embed_one(query).tolist(), k=k,
            fetch=max(10 * k, 100), threshold=threshold, exclude=list(exclude_chunk_ids),
        )
        return [
            AtomCandidate(atom_id=r["atom_id"], atom_text=r["atom_text"], score=float(r["score"]),
                          hit=hit_from_record(r, "atom", via=r["atom_text"], via_id=r["atom_id"]))
            for r in rows
        ]


def _fuse(runs: list[list[Hit]], k: int) -> list[Hit]:
    """Reciprocal-rank fusion of several ranked lists; a hit keeps every path that found it."""
    fused: dict[str, tuple[float, Hit, list[HitSource]]] = {}
    for run in runs:
        for rank, hit in enumerate(run):
            score, first, sources = fused.get(hit.chunk_id, (0.0, hit, []))
            fused[hit.chunk_id] = (score + 1.0 / (_RRF + rank + 1), first, sources + hit.sources)
    ranked = sorted(fused.values(), key=lambda item: -item[0])[:k]
    return [hit.model_copy(update={"score": score, "sources": sources}) for score, hit, sources in ranked]


class CypherFulltextHybrid:
    """Hybrid retrieval: dense chunks and Lucene full-text, fused by reciprocal rank."""

    def __init__(self, store: GraphStore, dense: CypherChunkVector) -> None:
        self.store, self.dense = store, dense

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        words = _WORD.findall(question)
        runs = [self.dense.retrieve(question, k=k, where=where)]
        if words:
            rows = self.store.read("reasoning/chunk_fulltext", query=" OR ".join(words), k=k, fetch=k + 20,
                                   **_filter_params(where))
            runs.append([hit_from_record(r, "fulltext") for r in rows])
        return _fuse(runs, k)


class CypherHierarchical:
    """PIKE-RAG's H-R (Figure 11): path (a) chunks for the query, path (b) atoms then their chunks."""

    def __init__(self, dense: CypherChunkVector, atoms: CypherAtomSearch, *, atom_k: int,
                 atom_threshold: float) -> None:
        self.dense, self.atoms = dense, atoms
        self.atom_k, self.atom_threshold = atom_k, atom_threshold

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        hits = self.dense.retrieve(question, k=k, where=where)
        seen = {h.chunk_id for h in hits} | set(where.exclude_chunk_ids if where else [])
        for cand in self.atoms.candidates(question, k=self.atom_k, threshold=self.atom_threshold,
                                          exclude_chunk_ids=sorted(seen)):
            if cand.hit.chunk_id not in seen:
                seen.add(cand.hit.chunk_id)
                hits.append(cand.hit)
        return hits


class CypherKG2RAG:
    """KG2RAG's shape: seed chunks by similarity, expanded through shared entities, organised per seed."""

    def __init__(self, store: GraphStore, dense: CypherChunkVector) -> None:
        self.store, self.dense = store, dense

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        seeds = self.dense.retrieve(question, k=k, where=where)
        rows = self.store.read("reasoning/entity_expand", seeds=[h.chunk_id for h in seeds], k=k)
        by_seed: dict[str, list[Hit]] = {}
        for r in rows:
            by_seed.setdefault(r["seed"], []).append(hit_from_record(r, "kg2rag", via=", ".join(r["entities"])))
        organised: list[Hit] = []
        for seed in seeds:  # each seed followed by the chunks it links to: one connected group at a time
            organised.append(seed)
            organised.extend(h for h in by_seed.get(seed.chunk_id, []) if h.chunk_id not in
                             {o.chunk_id for o in organised})
        return organised[: 2 * k]


class CypherPGRAG:
    """PG-RAG's walk in short: fact items near the question, through their routes, to their chunks."""

    def __init__(self, store: GraphStore, embedder: Embedder) -> None:
        self.store, self.embedder = store, embedder

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        rows = self.store.read("reasoning/factitem_walk", vector=self.embedder.embed_one(question).tolist(),
                               k=k, fetch=10 * k)
        return [hit_from_record(r, "pgrag", via=r["path"]) for r in rows]


class CypherTables:
    """Tables with Row nodes, and Cypher aggregation over one column."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def tables(self) -> list[TableInfo]:
        rows = self.store.read("reasoning/table_columns", limit=200)
        return [TableInfo(r["table_id"], [str(h) for h in (r["header"] or [])],
                          hit_from_record(r, "table") if r["chunk_id"] else None) for r in rows]

    def aggregate(self, table_id: str, column: str, op: str, where: tuple[str, str] | None = None) -> Aggregation:
        row = self.store.read("reasoning/aggregate_rows", table_id=table_id, column=column,
                              where_column=where[0] if where else None, where_value=where[1] if where else None)[0]
        value: float | None = {
            "count": float(row["rows"]), "sum": row["total"], "avg": row["mean"],
            "min": row["minimum"], "max": row["maximum"],
        }[op]
        return Aggregation(table_id=table_id, column=column, op=op, value=value, rows=int(row["rows"]),
                           where=f"{where[0]}={where[1]}" if where else None)


def local_ports(store: GraphStore, embedder: Embedder, settings: ReasoningSettings) -> Ports:
    """Every port bound to the Cypher implementations above."""
    flat = CypherChunkVector(store, embedder, threshold=settings.flat_threshold)
    strict = CypherChunkVector(store, embedder, threshold=settings.hier_threshold)
    atoms = CypherAtomSearch(store, embedder)
    return Ports(
        flat=flat,
        hierarchical=CypherHierarchical(strict, atoms, atom_k=settings.atom_k,
                                        atom_threshold=settings.atom_threshold),
        hybrid=CypherFulltextHybrid(store, flat),
        kg2rag=CypherKG2RAG(store, flat),
        pgrag=CypherPGRAG(store, embedder),
        atoms=atoms,
        tables=CypherTables(store),
    )
