"""``strata bench ingest``: the batched writer against a naive one-statement-per-row writer.

Both write the same parsed and chunked passages, without embeddings, into the same throwaway Neo4j (the
database is emptied before every run). Parsing and chunking are done once, before any clock starts. The
batched writer is what ``strata load`` runs: groups of ``GROUP_CHUNKS`` chunks on one session, each
group's rows built while the previous group commits.

Both writers are compared on a warm server. Each first writes a small warm-up corpus (other passages,
then wiped), so neither pays for query planning inside its timing. The JVM, though, keeps compiling for
well over a minute of work (the batched writer on 10,000 passages: 7.3, 5.6, 4.7, 3.6 s in its first four
runs on a fresh server), which the naive writer's single run of a minute and more absorbs and a batched run
of seconds does not. So the order is: one batched run on the fresh server, reported as
``batched_cold_*``; the naive run; then ``batched_runs`` batched runs, whose median is the headline
``batched_chunks_per_s``. After the last batched run, the pass that a load runs next, linking explicit
title mentions both ways (:mod:`kg.layers.resource.references`), is timed on its own: ``mention_links_*``.
"""

from __future__ import annotations

import resource
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neo4j import RoutingControl

import cypher
from kg.app.bench.corpus import write_corpus
from kg.embeddings import HashingEmbedder
from kg.layers.corpus.ingest import prepare_structural
from kg.layers.corpus.writer import (
    GROUP_CHUNKS,
    DocumentWriter,
    PreparedDocument,
    corpus_rows,
    document_groups,
    on_wire,
)
from kg.layers.resource.documents import await_fulltext
from kg.layers.resource.references import link_title_mentions
from kg.provisioning.throwaway import throwaway_server
from kg.settings import Settings
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from kg.store.schema import ensure_schema
from loaders import load_path

__all__ = ["run_ingest_bench"]

_WARMUP = 500  # passages


def _prepare(corpus: Path, settings: Settings) -> list[PreparedDocument]:
    return [prepare_structural(doc, settings.chunk_tokens, settings.chunk_overlap) for doc in load_path(corpus)]


def _batched(store: GraphStore, docs: list[PreparedDocument], batch_size: int) -> float:
    writer = DocumentWriter(store, batch_size=batch_size)
    started = time.perf_counter()
    writer.write_many(document_groups(docs))
    return time.perf_counter() - started


def run_ingest_bench(settings: Settings, *, passages: int = 10_000, corpus: Path | None = None,
                     batched_runs: int = 3) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        source = corpus or write_corpus(Path(tmp) / "bench_corpus.json", passages)
        docs = _prepare(source, settings)
        warmup = _prepare(write_corpus(Path(tmp) / "warmup_corpus.json", _WARMUP, seed=11), settings)
    n_chunks = sum(len(d.chunks) for d in docs)
    schema_embedder = HashingEmbedder(dimensions=8)  # the schema needs a dimension; nothing is embedded
    with throwaway_server(settings) as endpoint, Neo4jGraphStore.connect(endpoint.uri, endpoint.user,
                                                                     endpoint.password) as store:
        ensure_schema(store, schema_embedder.name, schema_embedder.dimensions)
        _batched(store, warmup, settings.batch_size)
        store.run_autocommit("meta/wipe")
        cold_s = _batched(store, docs, settings.batch_size)
        store.run_autocommit("meta/wipe")
        naive_write(store, warmup)
        store.run_autocommit("meta/wipe")
        started = time.perf_counter()
        naive_write(store, docs)
        naive_s = time.perf_counter() - started
        runs = []
        for _ in range(batched_runs):
            store.run_autocommit("meta/wipe")
            runs.append(_batched(store, docs, settings.batch_size))
        batched_s = statistics.median(runs)
        started = time.perf_counter()
        linked = link_title_mentions(store)
        links_s = time.perf_counter() - started
        references = store.query("MATCH (:Document)-[r:REFERENCES]->(:Document) RETURN count(r) AS n")[0]["n"]
    batched_cps = n_chunks / batched_s
    naive_cps = n_chunks / naive_s
    return {
        "passages": len(docs),
        "chunks": n_chunks,
        "batched_seconds": round(batched_s, 3),
        "batched_runs_seconds": [round(r, 3) for r in runs],
        "batched_cold_seconds": round(cold_s, 3),
        "batched_cold_chunks_per_s": round(n_chunks / cold_s, 1),
        "naive_seconds": round(naive_s, 3),
        "batched_passages_per_s": round(len(docs) / batched_s, 1),
        "batched_chunks_per_s": round(batched_cps, 1),
        "naive_passages_per_s": round(len(docs) / naive_s, 1),
        "naive_chunks_per_s": round(naive_cps, 1),
        "ratio": round(batched_cps / naive_cps, 2),
        "mention_links_seconds": round(links_s, 3),
        "mention_links_documents_per_s": round(linked / links_s, 1),
        "mention_links_references": references,
        "group_chunks": GROUP_CHUNKS,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def naive_write(store: GraphStore, docs: Sequence[PreparedDocument]) -> int:
    """One statement per row, the way naive loaders write; kept only as the benchmark's baseline."""
    rows = corpus_rows(docs)
    count = 0
    for name, items in (("graph/create_documents", rows.documents), ("graph/create_sections", rows.sections),
                        ("graph/link_sections", rows.sections), ("graph/create_chunks", rows.chunks),
                        ("graph/link_next", rows.next_links)):
        text = cypher.load(name)
        for item in items:
            store.query(text, routing=RoutingControl.WRITE, rows=[on_wire(item) if "props" in item else item])
            count += 1
    await_fulltext(store)
    return count

