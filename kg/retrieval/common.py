"""What every Cypher-backed retriever shares: query vectors, filter parameters, rows to typed hits."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, overload

from kg.embeddings import Embedder
from kg.errors import RetrievalError
from kg.retrieval.base import Hit, HitSource, RetrievalFilter
from kg.store.base import GraphStore
from kg.store.queries import CHUNKS_BY_ID, HAS_LABEL, PathChunkRow, ScoredChunkRow, SourcedChunkRow

__all__ = ["filter_params", "graph_has", "hit_from_row", "hits_by_id", "query_vector"]


def query_vector(embedder: Embedder, text: str) -> list[float]:
    """The query's embedding. A zero vector has no direction (cosine is undefined and Neo4j's vector index
    rejects it), so a text that embeds to one is a :class:`~kg.errors.RetrievalError`, not a server error."""
    vector = [float(x) for x in embedder.embed_query(text)]
    if not any(vector):
        raise RetrievalError(f"the question {text!r} has nothing to embed" if text.strip() else "the question is empty")
    return vector


def filter_params(where: RetrievalFilter | None, exclude: Iterable[str] = ()) -> dict[str, Any]:
    """The ``$document_ids``, ``$exclude_ids``, ``$formats`` and ``$metadata`` every retrieval query takes."""
    where = where or RetrievalFilter()
    return {
        "document_ids": where.document_ids,
        "exclude_ids": sorted({*where.exclude_chunk_ids, *exclude}),
        "formats": where.formats,
        "metadata": where.metadata,
    }


@overload
def hit_from_row(row: PathChunkRow | SourcedChunkRow, sources: None = None) -> Hit: ...
@overload
def hit_from_row(row: ScoredChunkRow, sources: list[HitSource]) -> Hit: ...


def hit_from_row(row: PathChunkRow | SourcedChunkRow | ScoredChunkRow, sources: list[HitSource] | None = None) -> Hit:
    """A hit from a row with the chunk columns every retrieval query returns. Its sources are the row's
    ``sources`` list, else one source from ``path``/``score``/``via``/``via_id``, unless given."""
    if sources is None:
        found: Mapping[str, Any] = row  # a PathChunkRow or a SourcedChunkRow (see the overloads)
        if found.get("sources") is not None:
            sources = [HitSource(path=s["path"], score=float(s["score"]), via=s.get("via"), via_id=s.get("via_id"))
                       for s in found["sources"] if s.get("score") is not None]
        else:
            sources = [HitSource(path=found["path"], score=float(found["score"]), via=found.get("via"),
                                 via_id=found.get("via_id"))]
    return Hit(
        chunk_id=row["chunk_id"], text=row["text"] or "", document_id=row["document_id"], title=row["title"] or "",
        source=row.get("source"), page=row.get("page"), char_start=int(row["char_start"] or 0),
        char_end=int(row["char_end"] or 0), score=float(row["score"] or 0.0), sources=sources,
        sentences=list(row.get("sentences") or []),
    )


def hits_by_id(store: GraphStore, ids: list[str], vector: list[float] | None) -> dict[str, ScoredChunkRow]:
    """Chunk rows by id, with their raw cosine to ``vector`` as ``score`` (None without a vector)."""
    if not ids:
        return {}
    return {row["chunk_id"]: row for row in store.read(CHUNKS_BY_ID, ids=ids, vector=vector)}


def graph_has(store: GraphStore, label: str) -> bool:
    """Whether the graph holds any node of ``label`` (e.g. are there atoms to retrieve through?)."""
    return bool(store.read(HAS_LABEL.render(label=label))[0]["present"])
