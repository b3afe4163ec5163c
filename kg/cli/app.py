"""The Typer application and the settings every command receives."""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.console import Console

from kg.settings import Settings

__all__ = [
    "app", "bench_app", "cache_app", "console", "emit_json", "eval_app", "llm_app", "neo4j_app", "settings_of",
]

app = typer.Typer(help="Strata: a three-layer knowledge graph in Neo4j, and cited answers over it.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
neo4j_app = typer.Typer(help="Run the local Neo4j server Strata provisions (no Docker needed).",
                        no_args_is_help=True)
app.add_typer(neo4j_app, name="neo4j")
llm_app = typer.Typer(help="Run the local model server behind STRATA_LLM_BASE_URL=local (llama.cpp, loopback only).",
                      no_args_is_help=True)
app.add_typer(llm_app, name="llm")
bench_app = typer.Typer(help="Benchmarks on a throwaway Neo4j; each prints JSON.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
eval_app = typer.Typer(help="Evaluations on public QA data, isolated from your knowledge bases.",
                       no_args_is_help=True)
app.add_typer(eval_app, name="eval")
cache_app = typer.Typer(help="The LLM response and embedding caches in STRATA_CACHE_DIR.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")
console = Console(stderr=True)


@app.callback()
def _configure(
    ctx: typer.Context,
    kb: str = typer.Option(None, "--kb", help="Knowledge base name (default: STRATA_KB or 'default')."),
) -> None:
    overrides: dict[str, Any] = {"kb": kb} if kb else {}
    ctx.obj = Settings.from_env(**overrides)


def settings_of(ctx: typer.Context) -> Settings:
    settings = ctx.find_root().obj
    assert isinstance(settings, Settings)
    return settings


def emit_json(data: Any) -> None:
    """Machine-readable output goes to stdout; everything for people goes to stderr."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
