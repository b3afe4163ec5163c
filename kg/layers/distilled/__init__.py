"""The distilled-knowledge layer: atoms, chunk-linked triples and entities, tags, table rows and the PG-RAG
pseudo-graph, built from loaded chunks into Neo4j with their vector indexes.

Example::

    from kg.layers.distilled import distill, expand_query_with_tags
    from kg.retrieval.tables import aggregate_rows
    report = distill(store, embedder, llm, layers=["atoms", "triples", "tables"])
    print(report.to_json()["layers"]["atoms"]["created"])
    expand_query_with_tags(store, "what causes a heart attack?")
    aggregate_rows(store, None, "population", "max", {"country": "France"})

Every distilled node links to the chunk(s) it came from and carries its ``document_id``, so replacing or
deleting a document (:func:`kg.layers.resource.documents.delete_documents`) removes it, keeping shared entities and tags
that other documents still use. Each layer writes whole chunks per transaction and marks them in
``Chunk.distilled``; a stopped job resumes without duplicates.
"""

from kg.layers.distilled.estimate import estimate_load
from kg.layers.distilled.models import (
    ALL_LAYERS,
    DISTILL_BATCH_CHARS,
    DISTILL_BATCH_CHUNKS,
    ChunkFailure,
    DistillConfig,
    DistillReport,
    LayerName,
    LayerReport,
)
from kg.layers.distilled.offline import OfflineExtractor
from kg.layers.distilled.pipeline import (
    DEFAULT_LAYERS_LLM,
    DEFAULT_LAYERS_OFFLINE,
    default_layers,
    distill,
    llm_batch_size,
    llm_tasks_of,
    parse_layers,
)
from kg.layers.distilled.resolve import EntityResolver, canonical_type, entity_key, entity_row, types_compatible
from kg.layers.distilled.tags import expand_query_with_tags
from kg.layers.distilled.text import RougeScore, rouge_l, statements

__all__ = [
    "ALL_LAYERS",
    "DEFAULT_LAYERS_LLM",
    "DEFAULT_LAYERS_OFFLINE",
    "DISTILL_BATCH_CHARS",
    "DISTILL_BATCH_CHUNKS",
    "ChunkFailure",
    "DistillConfig",
    "DistillReport",
    "EntityResolver",
    "LayerName",
    "LayerReport",
    "OfflineExtractor",
    "RougeScore",
    "canonical_type",
    "default_layers",
    "distill",
    "entity_key",
    "entity_row",
    "estimate_load",
    "expand_query_with_tags",
    "llm_batch_size",
    "llm_tasks_of",
    "parse_layers",
    "rouge_l",
    "statements",
    "types_compatible",
]
