"""``strata ask`` and ``strata train-data``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from kg.app.cli.app import announce_local_llm, app, console, emit_json, settings_of
from kg.app.client import Strata
from kg.embeddings import make_embedder
from kg.errors import ConfigError
from kg.llm import make_llm
from reasoning import METHODS, Answer, ReasoningSettings

_METHOD_HELP = f"Reasoning method: {', '.join(METHODS)}."


def _print_answer(out: Answer, trace: bool) -> None:
    if out.offline:
        console.print("[yellow]offline extractive answer[/] (no LLM configured: set STRATA_LLM_BASE_URL)")
    console.print(f"[bold]{out.answer}[/]", highlight=False)
    label = f"method {out.method}" + (f", class {out.question_class}" if out.question_class else "")
    if out.stop_reason:
        label += f", stopped: {out.stop_reason}"
    console.print(label, highlight=False)
    table = Table("#", "title", "page", "chars", "supports", title="citations")
    for c in out.citations:
        table.add_row(str(c.marker), c.title, "" if c.page is None else str(c.page), f"{c.char_start}-{c.char_end}",
                      "; ".join(c.claims)[:80])
    console.print(table)
    if out.dropped_markers:
        console.print(f"[red]dropped citation markers not in the evidence given:[/] {out.dropped_markers}")
    if out.unsupported_citations:
        console.print(f"[red]dropped citations whose chunk does not support the sentence:[/] "
                      f"{out.unsupported_citations}")
    if out.abstained:
        console.print("[yellow]abstained:[/] no source supports an answer", highlight=False)
    if trace:
        if out.decomposition is not None:
            console.print(out.decomposition.render(), highlight=False)
        for step in out.trace:
            if step.kind != "decompose":
                console.print(f"{step.index}. {step.kind}: {json.dumps(step.detail, default=str)[:300]}",
                              highlight=False)
        console.print(f"LLM calls {out.usage.calls}, tokens {out.usage.tokens}")


@app.command("ask")
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question."),
    method: str = typer.Option("auto", "--method", help=_METHOD_HELP),
    trace: bool = typer.Option(False, "--trace", help="Print the reasoning trace."),
    json_out: bool = typer.Option(False, "--json", help="Print the answer, citations and trace as JSON."),
) -> None:
    """Answer a question from the knowledge base, with citations (title, page, character span)."""
    announce_local_llm(settings_of(ctx))
    with Strata.connect(settings_of(ctx)) as kb:
        out = kb.ask(question, method=method)
        usage = kb.llm.accounting.report()
    if json_out:
        emit_json(out.model_dump(mode="json"))
    else:
        _print_answer(out, trace)
    console.print(f"llm: {usage.summary()}", highlight=False)


@app.command("train-data")
def train_data(
    ctx: typer.Context,
    dataset: Path = typer.Option(..., "--dataset", exists=True, help="QA questions with gold answers."),
    limit: int = typer.Option(None, "--limit", help="Only the first N questions."),
    out: Path = typer.Option(..., "--out", help="Folder for trajectories.jsonl, sft.jsonl and dpo.jsonl."),
    rollouts: int = typer.Option(3, "--rollouts", help="Trajectories per question (Algorithm 2)."),
    json_out: bool = typer.Option(False, "--json", help="Print the counts as JSON."),
) -> None:
    """Collect decomposer training data (PIKE-RAG Algorithm 2) in a throwaway Neo4j; needs an LLM."""
    from kg.app.evaluation.qa import best_f1, isolated_kb, questions_of
    from kg.app.evaluation.runner import corpus_documents
    from reasoning.bindings import default_ports
    from reasoning.training import collect_trajectories, write_training_data

    settings = settings_of(ctx)
    if settings.llm.offline:
        raise ConfigError("train-data needs an LLM: set STRATA_LLM_BASE_URL (and STRATA_LLM_MODEL)")
    reasoning_settings = ReasoningSettings(rollouts=rollouts)
    embedder = make_embedder(settings.embedder, cache_dir=settings.cache_dir)
    trajectories = []
    with make_llm(settings.llm, cache_dir=settings.cache_dir) as llm, \
            isolated_kb(settings, embedder, llm, corpus_documents(dataset, limit=limit)) as (store, _):
        ports = default_ports(store, embedder, llm, reasoning_settings)
        for q in questions_of(dataset, limit):
            trajectories += collect_trajectories(q.question, q.answers, question_id=q.id, store=store, llm=llm,
                                                 ports=ports, settings=reasoning_settings, scorer=best_f1)
    summary = write_training_data(trajectories, out)
    if json_out:
        emit_json(summary)
    else:
        console.print(f"written: {summary['counts']} into {out}")
