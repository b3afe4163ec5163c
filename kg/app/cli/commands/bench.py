"""``strata bench ...``: benchmarks, each in a throwaway Neo4j, printing JSON."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kg.app.cli.app import bench_app, console, emit_json, settings_of

__all__ = ["bench_distill"]

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
                  f"{report.llm_chunks_per_s_excluding_llm} chunks/s", highlight=False)
