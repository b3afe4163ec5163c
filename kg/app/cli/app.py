"""The Typer application and the settings every command receives."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from kg.settings import Settings
from kg.shared.redaction import redact, redact_data, remember, secrets_of

__all__ = [
    "announce_local_llm", "app", "bench_app", "cache_app", "console", "emit_json", "eval_app", "llm_app", "neo4j_app",
    "settings_of", "write_json",
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


class _RedactedStderr:
    """The current ``sys.stderr`` (looked up at each write, as tests swap it), with secrets masked: what people
    read may quote an endpoint's error text (see :mod:`kg.shared.redaction`)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(redact(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stderr, name)


console = Console(file=_RedactedStderr())  # type: ignore[arg-type]


@app.callback()
def _configure(
    ctx: typer.Context,
    kb: str = typer.Option(None, "--kb", help="Knowledge base name (default: STRATA_KB or 'default')."),
) -> None:
    overrides: dict[str, Any] = {"kb": kb} if kb else {}
    ctx.obj = Settings.from_env(**overrides)
    remember(*secrets_of(ctx.obj))


def settings_of(ctx: typer.Context) -> Settings:
    settings: Settings = ctx.find_root().obj  # typer's untyped slot, set by _configure() above
    return settings


def announce_local_llm(settings: Settings) -> None:
    """With ``STRATA_LLM_BASE_URL=local``, start the local model server now, saying so: its first start
    assembles the model (a gigabyte) and would otherwise look like a hang."""
    if settings.llm.is_local and settings.llm.local is not None:
        from kg.llm.local import LocalLLMServer

        server = LocalLLMServer(settings.llm.local)
        if server.running() is None:
            info = server.start(progress=lambda msg: console.print(msg, highlight=False))
            console.print(f"Local LLM {info.alias} at {info.base_url} ({info.runtime}); `strata llm stop` stops it.",
                          highlight=False)


def emit_json(data: Any) -> None:
    """Machine-readable output goes to stdout; everything for people goes to stderr. Secrets an endpoint's
    error text may carry are masked (the JSON stays valid)."""
    typer.echo(_dumps(data))


def write_json(path: Path, data: Any) -> None:
    """A JSON report written to ``path`` (``-``: stdout), secrets masked as by :func:`emit_json`."""
    if str(path) == "-":
        emit_json(data)
        return
    path.write_text(_dumps(data), "utf-8")


def _dumps(data: Any) -> str:
    # Redacting the values, not the text: a key such as "password" next to null or a number stays valid JSON.
    return json.dumps(redact_data(data), indent=2, ensure_ascii=False, default=str)
