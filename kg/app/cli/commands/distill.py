"""``strata distill``: (re)build the distilled layers of loaded documents."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.table import Table

from kg.app.cli.app import announce_local_llm, app, console, settings_of, write_json
from kg.app.client import Strata
from kg.layers.distilled import ALL_LAYERS, DistillReport, parse_layers

__all__ = ["ProgressLines", "distill_command", "print_report", "run_distill"]


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


@dataclass
class ProgressLines:
    """Progress as plain lines on stderr (a log keeps them, unlike a redrawn bar): a layer's start, then
    at most one line every ``every_s`` seconds, and its last; each with chunks done of the pending total, the
    rate of this run and the time left at that rate."""

    every_s: float = 10.0
    _started: dict[str, float] = field(default_factory=dict)
    _shown: dict[str, float] = field(default_factory=dict)

    def __call__(self, layer: str, done: int, total: int) -> None:
        now = time.monotonic()
        started = self._started.setdefault(layer, now)
        first = layer not in self._shown
        if not first and done < total and now - self._shown[layer] < self.every_s:
            return
        self._shown[layer] = now
        rate = done / max(now - started, 1e-9)
        eta = _duration((total - done) / rate) if rate > 0 else "unknown"
        share = 100.0 * done / total if total else 100.0
        console.print(f"distill {layer}: {done:,}/{total:,} chunks ({share:.1f}%), {rate:.1f} chunks/s, "
                      f"ETA {eta}", highlight=False)


def run_distill(kb: Strata, layers: str | None, document_ids: list[str] | None, *, force: bool = False,
                retry_failed: bool = True, batch_size: int | None = None, fuse: bool = False) -> DistillReport:
    """Distil with progress lines on stderr; ``retry_failed`` tries chunks whose LLM task failed, ``fuse`` runs
    the pseudo-graph's fusion."""
    return kb.distill(layers=parse_layers(layers), document_ids=document_ids, force=force,
                      progress=ProgressLines(), retry_failed=retry_failed, batch_size=batch_size, fuse=fuse)


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
    batch_size: int = typer.Option(None, "--batch-size", min=1,
                                   help="Chunks per batch and transaction (default 2,000, and at most 2 million "
                                        "characters of their text; with an LLM at most four times the calls in "
                                        "flight)."),
    fuse: bool = typer.Option(False, "--fuse",
                              help="With the pseudograph layer: fuse its topics and fact items across documents "
                                   "(PG-RAG knowledge fusion), every one not fused yet. Off by default: no "
                                   "retrieval method reads the fusion nodes."),
) -> None:
    """Distil loaded documents into atoms, entities and facts, tags, table rows and the pseudo-graph.

    Resumable: chunks already distilled for a layer are skipped. Several `strata distill` processes over one
    knowledge base share the pending chunks (each claims its own). Exit status 1 if any chunk failed.
    """
    document_ids = [d.strip() for d in docs.split(",") if d.strip()] if docs else None
    announce_local_llm(settings_of(ctx))
    with Strata.connect(settings_of(ctx)) as kb:
        report = run_distill(kb, only, document_ids, force=force, batch_size=batch_size, fuse=fuse)
    data = report.to_json()
    if json_out is not None:
        write_json(json_out, data)
    print_report(report)
    if report.failed or report.stopped:
        raise typer.Exit(1)
