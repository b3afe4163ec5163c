"""``strata bench ...``: benchmarks, each in a throwaway Neo4j, printing JSON."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kg.app.cli.app import bench_app, console, emit_json, settings_of

__all__ = ["bench_distill", "bench_scale"]

_CORPUS = Path(__file__).resolve().parents[4].parent / "shared" / "data" / "hotpotqa_sample" / \
    "hotpotqa_train_corpus.json"


@bench_app.command("distill")
def bench_distill(
    ctx: typer.Context,
    passages: int = typer.Option(1000, "--passages", help="Passages to load and distil."),
    sizes: str = typer.Option("10000,100000", "--sizes", help="Existing-entity counts for the resolution test."),
    mentions: int = typer.Option(500, "--mentions", help="New mentions resolved at each size."),
    corpus: Path = typer.Option(_CORPUS, "--corpus", help="Passages ({title: [sentences]} or [{title, text}]); "
                                "synthetic passages when missing."),
    json_out: Path = typer.Option(None, "--json", help="Also write the JSON report to this file."),
) -> None:
    """Distillation chunks/s (offline, and with the scripted LLM minus its latency) and entity-resolution
    time per new entity at each graph size."""
    from kg.app.bench.distill import run_distill_bench

    report = run_distill_bench(settings_of(ctx), passages=passages, mentions=mentions, corpus=corpus,
                               sizes=[int(s) for s in sizes.split(",") if s.strip()])
    data = report.to_json()
    if json_out is not None:
        json_out.write_text(json.dumps(data, indent=2), "utf-8")
    emit_json(data)
    console.print(f"offline {report.offline_chunks_per_s} chunks/s; with LLM (excluding its latency) "
                  f"{report.llm_chunks_per_s_excluding_llm} chunks/s; passages: {report.corpus}", highlight=False)


@bench_app.command("scale")
def bench_scale(
    ctx: typer.Context,
    passages: int = typer.Option(1_000_000, "--passages", min=10, help="Passages in the last decade."),
    first_decade: int = typer.Option(10_000, "--first-decade", min=10,
                                     help="Passages at the first measurement; each next one has ten times more."),
    queries: int = typer.Option(50, "--queries", min=5, help="Timed queries per method at each decade."),
    json_out: Path = typer.Option(None, "--json", help="Also write the JSON report to this file."),
    store: Path = typer.Option(None, "--store", help="Keep the server, vectors and progress in this folder: a "
                               "run that stopped continues where it stopped when started again on it."),
) -> None:
    """One store grown decade by decade to --passages generated passages: ingest and distil chunks/s, index
    time, store size, client and server peak memory, and query p50/p95 of every method and of numpy."""
    from kg.app.bench.scale import run_scale_bench
    from kg.embeddings import make_embedder

    settings = settings_of(ctx)
    embedder = make_embedder(settings.embedder, cache_dir=settings.cache_dir)
    report = run_scale_bench(settings, embedder, passages=passages, first_decade=first_decade, queries=queries,
                             store=store, progress=lambda msg: console.print(msg, highlight=False))
    data = report.to_json()
    if json_out is not None:
        json_out.write_text(json.dumps(data, indent=2), "utf-8")
    emit_json(data)
