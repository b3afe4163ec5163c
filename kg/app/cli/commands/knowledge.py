"""``strata init|config|load|delete|documents|stats``."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kg.app.cli.app import announce_local_llm, app, cache_app, console, emit_json, settings_of, write_json
from kg.app.client import LAYERS, Strata
from kg.layers.corpus.ingest import PENDING_HINT, find_files


@app.command("init")
def init(ctx: typer.Context, json_out: bool = typer.Option(False, "--json")) -> None:
    """Start Neo4j if needed and install Strata's schema (idempotent)."""
    with Strata.connect(settings_of(ctx)) as kb:
        status = kb.stats().schema
    if json_out:
        emit_json(asdict(status))
    else:
        console.print(f"Schema v{status.version} installed; embedder {status.embedder} ({status.dimensions} dims).")


@app.command("config")
def config(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the effective configuration (secrets hidden), the local model server and the structured-output
    forms found per endpoint and model."""
    from kg.llm.local import LocalLLMServer
    from kg.llm.negotiation import ResponseFormats

    settings = settings_of(ctx)
    data = settings.redacted()
    if settings.llm.local is not None:
        running = LocalLLMServer(settings.llm.local).running()
        data["local_llm_server"] = running.to_json() if running is not None else None
    data["llm_response_formats"] = ResponseFormats(settings.cache_dir / "llm").all()
    if json_out:
        emit_json(data)
        return
    console.print_json(data=data)


@cache_app.command("clear")
def cache_clear(
    ctx: typer.Context,
    only: str = typer.Option(None, "--only", help="Comma-separated: llm, embeddings (default: both)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Empty the LLM response cache and the embedding cache, so the next run calls the endpoints again."""
    from kg.shared.response_cache import CACHES, clear_caches

    names = [n.strip() for n in only.split(",") if n.strip()] if only else list(CACHES)
    unknown = sorted(set(names) - set(CACHES))
    if unknown:
        raise typer.BadParameter(f"unknown cache(s) {unknown}: choose from {', '.join(CACHES)}")
    cache_dir = settings_of(ctx).cache_dir
    removed = clear_caches(cache_dir, names)
    if json_out:
        emit_json({"cache_dir": str(cache_dir), "removed": removed})
        return
    for name, count in removed.items():
        console.print(f"{name}: {count} entries removed from {cache_dir}")


@app.command("load")
def load(
    ctx: typer.Context,
    paths: list[Path] = typer.Argument(..., help="Files and folders to load.", exists=True),
    include: list[str] = typer.Option([], "--include", help="Glob of files to take (repeatable)."),
    exclude: list[str] = typer.Option([], "--exclude", help="Glob of files to skip (repeatable)."),
    password: str = typer.Option(None, "--password", help="Password for encrypted PDFs."),
    report_path: Path = typer.Option(None, "--json", help="Write the JSON report to this file ('-': stdout)."),
    estimate: bool = typer.Option(False, "--estimate", help="Only estimate the LLM tokens; write nothing."),
    budget_tokens: int = typer.Option(None, "--budget-tokens", help="Stop cleanly before spending more tokens."),
    distill_layers: str = typer.Option(
        "atoms,triples", "--distill",
        help="Distilled layers to build after loading (atoms,triples,tags,tables,pseudograph), or 'none'. "
             "Without an LLM: statements and offline entities."),
) -> None:
    """Load documents and corpora into the knowledge base. Exit status 1 if any file failed."""
    from kg.app.cli.commands.distill import print_report, run_distill

    settings = settings_of(ctx)
    if estimate:
        # Parsing and chunking only: no Neo4j, no LLM call. Enhanced chunking, then the chosen layers.
        from kg.layers.distilled import DISTILL_BATCH_CHUNKS, estimate_load, llm_batch_size, parse_layers
        from kg.llm.local import model_alias
        from kg.llm.usage_history import UsageHistory

        chosen = [] if distill_layers.strip().lower() == "none" else parse_layers(distill_layers) or []
        files = find_files(paths, include, exclude)
        llm = settings.llm
        model = model_alias(llm.local.model) if llm.is_local and llm.local is not None else llm.model
        history = UsageHistory.under(settings.cache_dir)
        try:  # each task's replies as its own model wrote them here before (STRATA_LLM_MODEL_<TASK>)
            spent = {m: history.of(m) for m in {model, *llm.task_models.values()} if m}
        finally:
            history.close()
        observed = {task: usage for m, tasks in spent.items() for task, usage in tasks.items()
                    if (llm.task_models.get(task) or model) == m}
        predicted = estimate_load(files, layers=chosen, chunk_tokens=settings.chunk_tokens,
                                  chunk_overlap=settings.chunk_overlap, password=password,
                                  batch_chunks=llm_batch_size(DISTILL_BATCH_CHUNKS, settings.llm.max_concurrency),
                                  observed=observed)
        predicted["model"] = model
        write_json(report_path or Path("-"), predicted)  # stdout unless --json names a file
        return

    announce_local_llm(settings)
    with Strata.connect(settings, budget_tokens=budget_tokens) as kb:
        with _progress() as bar:
            task = bar.add_task("loading", total=None)

            def step(path: Path, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total, description=path.name[:40])

            report = kb.load(paths, include=include, exclude=exclude, password=password, progress=step)
        distilled = None
        skip = distill_layers.strip().lower() == "none"
        layers = "atoms,triples" if skip else distill_layers
        if not skip and any(kb.pending(layers.split(",")).values()):
            # Every chunk still pending: this load's, and any an interrupted earlier build left (a layer marks
            # each chunk it finished, so nothing is distilled twice).
            distilled = run_distill(kb, distill_layers, None, retry_failed=False)
        report.pending = kb.pending(layers.split(","))
        usage = kb.llm.accounting.report()  # the whole job: enhanced chunking and distillation
    data = report.to_json()
    data["llm"] = usage.to_json()
    if distilled is not None:
        data["distill"] = distilled.to_json()
    if report_path is not None:
        write_json(report_path, data)
    # "kept": chunks of a replaced document whose text did not change, kept with what was distilled from them.
    table = Table("file", "status", "docs", "chunks", "kept", "tables", "figures", "s", title="strata load")
    for f in report.files:
        table.add_row(Path(f.path).name, f.status, str(f.documents), str(f.chunks), str(f.kept_chunks),
                      str(f.tables), str(f.figures), f"{f.seconds:.2f}")
    console.print(table)
    for f in report.files:
        if f.error:
            console.print(f"[red]{f.status}[/]: {f.error}", highlight=False)
        if f.note:
            console.print(f"{f.status}: {f.path}: {f.note}", highlight=False)
        for warning in f.warnings:
            console.print(f"[yellow]warning[/]: {f.path}: {warning}", highlight=False)
    console.print(f"summary: {report.summary()}  chunking: {report.chunking}", highlight=False)
    if distilled is not None:
        print_report(distilled)  # ends with the same job-wide llm line: one accounting serves the whole job
    else:
        console.print(f"llm: {usage.summary()}", highlight=False)
    if any(report.pending.values()):
        left = ", ".join(f"{layer} {n}" for layer, n in report.pending.items() if n)
        console.print(f"[yellow]pending[/]: {left} {PENDING_HINT}", highlight=False)
    if report.failed or (distilled is not None and (distilled.failed or distilled.stopped)):
        raise typer.Exit(1)


@app.command("delete")
def delete(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="Document id or source path, or the path of a QA corpus file."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Delete a document and everything derived only from it. The path of a file that holds many
    documents (a QA corpus) deletes all of them (with --json, a list)."""
    with Strata.connect(settings_of(ctx)) as kb:
        if kb.find(key) is None:
            docs = kb.delete_file(key)
            if json_out:
                emit_json([d.model_dump() for d in docs])
            else:
                console.print(f"Deleted {len(docs)} documents read from {docs[0].source.split('#')[0]}.",
                              highlight=False)
            return
        doc = kb.delete(key)
    if json_out:
        emit_json(doc.model_dump())
    else:
        console.print(f"Deleted {doc.id} ({doc.source}).", highlight=False)


@app.command("documents")
def documents(ctx: typer.Context, json_out: bool = typer.Option(False, "--json")) -> None:
    """List loaded documents."""
    with Strata.connect(settings_of(ctx)) as kb:
        docs = kb.documents()
    if json_out:
        emit_json([d.model_dump() for d in docs])
        return
    table = Table("id", "title", "format", "pages", "chunks", "source")
    for d in docs:
        table.add_row(d.id, d.title[:50], d.format, str(d.pages or ""), str(d.chunks), d.source)
    console.print(table)


@app.command("stats")
def stats(ctx: typer.Context, json_out: bool = typer.Option(False, "--json")) -> None:
    """Node and relationship counts per layer, and the state of every index."""
    with Strata.connect(settings_of(ctx)) as kb:
        s = kb.stats()
    if json_out:
        emit_json({**asdict(s), "layers": s.by_layer()})
        return
    layers = Table("layer", "labels", "nodes", title="layers")
    for layer, labels in LAYERS.items():
        layers.add_row(layer, ", ".join(labels), str(s.by_layer()[layer]))
    nodes = Table("label", "nodes", title="nodes")
    for label, count in s.nodes.items():
        nodes.add_row(label, str(count))
    rels = Table("type", "relationships", title="relationships")
    for rel, count in s.relationships.items():
        rels.add_row(rel, str(count))
    pending = Table("layer", "chunks not distilled", title="distillation pending (strata distill finishes it)")
    for layer, count in s.pending.items():
        pending.add_row(layer, str(count))
    idx = Table("index", "type", "on", "state", title="indexes")
    for i in s.indexes:
        idx.add_row(i["name"], i["type"], f"{i['labelsOrTypes']}{i['properties']}", i["state"])
    console.print(layers, nodes, rels, pending, idx)


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=True)
