"""``strata bench ingest``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kg.app.bench.ingest import run_ingest_bench
from kg.app.cli.app import bench_app, console, emit_json, settings_of


@bench_app.command("ingest")
def bench_ingest(
    ctx: typer.Context,
    passages: int = typer.Option(10_000, "--passages", help="Generated passages to load."),
    corpus: Path = typer.Option(None, "--corpus", help="A corpus file ({title, text} list) instead.", exists=True),
    json_out: Path = typer.Option(None, "--json", help="Also write the JSON result to this file."),
) -> None:
    """Batched UNWIND writer against a naive one-statement-per-row writer, on the same passages."""
    console.print(f"bench ingest: {passages if corpus is None else corpus} passages on a throwaway Neo4j...")
    result = run_ingest_bench(settings_of(ctx), passages=passages, corpus=corpus)
    if json_out is not None:
        json_out.write_text(json.dumps(result, indent=2), "utf-8")
    emit_json(result)
