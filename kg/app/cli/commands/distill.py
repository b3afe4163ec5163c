"""``strata distill``: (re)build the distilled layers of loaded documents."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from kg.app.cli.app import announce_local_llm, app, console, settings_of, write_json
from kg.app.client import Strata
from kg.layers.distilled import ALL_LAYERS, DistillReport, parse_layers

__all__ = ["distill_command", "print_report", "run_distill"]


def run_distill(kb: Strata, layers: str | None, document_ids: list[str] | None, *, force: bool = False,
                retry_failed: bool = True) -> DistillReport:
    """Distil with a progress bar per layer (on stderr); ``retry_failed`` tries chunks whose LLM task failed."""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def step(layer: str, done: int, total: int) -> None:
            if layer not in tasks:
                tasks[layer] = bar.add_task(f"distill {layer}", total=total)
            bar.update(tasks[layer], completed=done, total=total)

        return kb.distill(layers=parse_layers(layers), document_ids=document_ids, force=force, progress=step,
                          retry_failed=retry_failed)


def print_report(report: DistillReport) -> None:
    title = "strata distill" + (" (offline)" if report.offline else "")
    table = Table("layer", "method", "chunks", "pending", "created", "failed", "s", "llm s", title=title)
    for name, entry in report.layers.items():
        created = ", ".join(f"{k}={v}" for k, v in entry.created.items())
        table.add_row(name, entry.method, str(entry.chunks), str(entry.pending), created, str(len(entry.failed)),
                      f"{entry.seconds:.2f}", f"{entry.llm_seconds:.2f}")
    console.print(table)
    for entry in report.layers.values():
        for failure in entry.failed[:10]:
            console.print(f"[red]failed[/] {failure.layer} {failure.id}: {failure.error}", highlight=False)
    if report.stopped:
        console.print(f"[red]stopped[/]: {report.stopped}; run again to resume", highlight=False)
    console.print(f"llm: {report.llm.summary()}", highlight=False)


@app.command("distill")
def distill_command(
    ctx: typer.Context,
    only: str = typer.Option(None, "--only", help=f"Comma-separated layers: {', '.join(ALL_LAYERS)} "
                             "(default: atoms,triples,tables and tags with an LLM; atoms,triples,tables offline)."),
    docs: str = typer.Option(None, "--docs", help="Comma-separated document ids (default: every document)."),
    force: bool = typer.Option(False, "--force", help="Rebuild chunks already distilled."),
    json_out: Path = typer.Option(None, "--json", help="Write the JSON report to this file ('-': stdout)."),
) -> None:
    """Distil loaded documents into atoms, entities and facts, tags, table rows and the pseudo-graph.

    Resumable: chunks already distilled for a layer are skipped. Exit status 1 if any chunk failed.
    """
    document_ids = [d.strip() for d in docs.split(",") if d.strip()] if docs else None
    announce_local_llm(settings_of(ctx))
    with Strata.connect(settings_of(ctx)) as kb:
        report = run_distill(kb, only, document_ids, force=force)
    data = report.to_json()
    if json_out is not None:
        write_json(json_out, data)
    print_report(report)
    if report.failed or report.stopped:
        raise typer.Exit(1)
