"""``strata serve`` (the REST API and web page) and ``strata demo``."""

from __future__ import annotations

import os
import time

import typer
import uvicorn
from pydantic import SecretStr

from kg.app.cli.app import announce_local_llm, app, console, emit_json, settings_of
from kg.app.client import Strata
from kg.app.demo import run_demo
from kg.app.rest import ApiSettings, KnowledgeBases, KnowledgeService, StrataService, create_app
from kg.errors import ConfigError
from kg.provisioning import NEO4J_VERSION, local_server
from kg.settings import Settings


@app.command("serve")
def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    token_env: str = typer.Option(None, "--token-env", metavar="VAR",
                                  help="Require 'Authorization: Bearer <token>', the token read from this variable."),
    allow_kb: list[str] = typer.Option([], "--allow-kb", metavar="NAME",
                                       help="Also serve this knowledge base (?kb=NAME); repeatable."),
    max_upload_mb: float = typer.Option(50.0, "--max-upload-mb", help="Largest upload request, in MiB (413 above)."),
    json_out: bool = typer.Option(False, "--json", help="Print the server's address and settings as JSON first."),
) -> None:
    """Serve the REST API (OpenAPI docs at /docs) and the web page at / until interrupted."""
    settings = settings_of(ctx)
    token = None
    if token_env:
        value = os.environ.get(token_env, "")
        if not value:
            raise ConfigError(f"--token-env {token_env}: that environment variable is not set or empty")
        token = SecretStr(value)
    api_settings = ApiSettings(default_kb=settings.kb, allowed_kbs=frozenset(allow_kb), token=token,
                               max_upload_bytes=int(max_upload_mb * 1024 * 1024),
                               upload_dir=settings.home / "uploads")

    def open_kb(name: str) -> KnowledgeService:
        return StrataService(Strata.connect(settings if name == settings.kb else Settings.from_env(kb=name)))

    info = {"url": f"http://{host}:{port}/", "docs": f"http://{host}:{port}/docs", "kbs": sorted(api_settings.kbs),
            "auth": token is not None, "max_upload_bytes": api_settings.max_upload_bytes}
    if json_out:
        emit_json(info)
    else:
        console.print(f"Strata serves {info['kbs']} at [bold]{info['url']}[/] (API docs: {info['docs']})")
    if token is None and host not in ("127.0.0.1", "localhost", "::1"):
        console.print(f"[yellow]warning:[/] listening on {host} without a token; anyone who reaches it can "
                      "load and delete documents (use --token-env)")
    uvicorn.run(create_app(KnowledgeBases(open_kb), api_settings), host=host, port=port, log_level="warning")


@app.command("demo")
def demo(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Print the demo's results as JSON on stdout."),
    llm: str = typer.Option(None, "--llm", metavar="ENDPOINT",
                            help="'local' (the model `strata llm start` runs, started on demand), an "
                                 "OpenAI-compatible URL, or 'offline' (default: STRATA_LLM_BASE_URL)."),
) -> None:
    """Start Neo4j if needed, load the sample corpus, build every layer and answer five questions with citations.

    With ``--llm`` and no ``--kb``, the demo builds a knowledge base of its own (``demo-llm``): an LLM's
    chunks and atoms are not mixed with those an offline run built.
    """
    started = time.perf_counter()
    settings = settings_of(ctx)
    if llm is not None:
        chosen_kb = settings.kb if ctx.find_root().params.get("kb") or llm == "offline" else "demo-llm"
        environ = {**os.environ, "STRATA_LLM_BASE_URL": "" if llm == "offline" else llm}
        settings = Settings.from_env(environ, kb=chosen_kb)
    announce_local_llm(settings)
    if settings.neo4j is None and not local_server(settings).jars_installed():
        console.print(f"Downloading Neo4j {NEO4J_VERSION} jars from Maven Central (once)...")
    with Strata.connect(settings) as kb:
        connected = time.perf_counter() - started
        report = run_demo(StrataService(kb), offline=settings.llm.offline, console=console)
    console.print(f"Demo finished in {time.perf_counter() - started:.1f} s: {connected:.1f} s to reach Neo4j "
                  f"({kb.endpoint.kind}{', started' if kb.endpoint.started else ''}), {report.seconds:.1f} s "
                  "to load, build every layer and answer.", highlight=False)
    if json_out:
        emit_json(report.to_json())
    if report.load.failed:
        raise typer.Exit(1)
