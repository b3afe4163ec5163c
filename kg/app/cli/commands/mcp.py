"""``strata mcp``: the MCP server (stdio by default, or streamable HTTP), for assistants and agent frameworks."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import anyio
import typer
from mcp.server.mcpserver import MCPServer
from pydantic import SecretStr

from kg.app.cli.app import app, console, emit_json, settings_of
from kg.app.client import Strata
from kg.app.mcp import READ_TOOLS, WRITE_TOOLS, KnowledgeBasePool, McpSettings, create_server, http_app
from kg.errors import ConfigError, StrataError
from kg.settings import Settings
from kg.shared.redaction import remember

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT``, ``:PORT`` or ``PORT`` (host 127.0.0.1) as (host, port)."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "", value
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--http {value}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    return host, int(port)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _run_stdio(server: MCPServer[None]) -> None:
    """Serve over stdio until the client closes it; a Strata error (raised while connecting the knowledge base,
    inside the SDK's task groups) comes out as itself, so the CLI reports it with its exit code."""
    try:
        anyio.run(server.run_stdio_async)
    except BaseExceptionGroup as group:
        found = group.subgroup(lambda exc: isinstance(exc, StrataError))
        while found is not None and isinstance(found.exceptions[0], BaseExceptionGroup):
            found = found.exceptions[0]
        if found is not None:
            raise found.exceptions[0] from group
        raise


@app.command("mcp")
def mcp(
    ctx: typer.Context,
    kb: list[str] = typer.Option([], "--kb", metavar="NAME",
                                 help="Knowledge base to serve; repeatable, the first is the default "
                                      "(default: strata --kb, STRATA_KB or 'default')."),
    http: str = typer.Option(None, "--http", metavar="HOST:PORT",
                             help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio "
                                  "(a bare PORT listens on 127.0.0.1)."),
    token_env: str = typer.Option(None, "--token-env", metavar="VAR",
                                  help="With --http: require 'Authorization: Bearer <token>', the token read "
                                       "from this variable."),
    allow_write: bool = typer.Option(False, "--allow-write", help="Add the load and delete tools."),
    load_root: list[Path] = typer.Option([], "--load-root", metavar="DIR",
                                         help="With --allow-write: a folder load may read files from; "
                                              "repeatable (without one, load takes text only)."),
    json_out: bool = typer.Option(False, "--json", help="Print the server's settings as JSON first (on stderr "
                                                        "for stdio, where stdout carries the protocol)."),
) -> None:
    """Serve knowledge bases to MCP clients: search, ask, list_documents, get_chunk, explain_entity (and, with
    --allow-write, load and delete), document outlines as resources, and a citing prompt."""
    settings = settings_of(ctx)
    names = list(dict.fromkeys(kb)) or [settings.kb]
    token = None
    if token_env:
        if not http:
            raise ConfigError("--token-env applies to --http only: a stdio server is reached by its parent process")
        value = os.environ.get(token_env, "")
        if not value:
            raise ConfigError(f"--token-env {token_env}: that environment variable is not set or empty")
        token = SecretStr(value)
        remember(value)  # masked wherever Strata's output could quote it
    roots = []
    for root in load_root:
        resolved = root.expanduser().resolve()
        if not resolved.is_dir():
            raise ConfigError(f"--load-root {root}: not a folder")
        roots.append(resolved)
    if roots and not allow_write:
        raise ConfigError("--load-root applies to --allow-write only")
    mcp_settings = McpSettings(default_kb=names[0], other_kbs=tuple(names[1:]), allow_write=allow_write,
                               load_roots=tuple(roots))

    def open_kb(name: str) -> Strata:
        return Strata.connect(settings if name == settings.kb else Settings.from_env(kb=name))

    pool = KnowledgeBasePool(open_kb, mcp_settings)
    server = create_server(pool, mcp_settings)
    info: dict[str, object] = {
        "transport": "streamable-http" if http else "stdio", "kbs": list(mcp_settings.kbs),
        "tools": [*READ_TOOLS, *(WRITE_TOOLS if allow_write else ())], "auth": token is not None,
        "load_roots": [str(r) for r in roots],
    }
    try:
        if not http:
            if json_out:
                console.print_json(data=info)
            _run_stdio(server)
            return
        host, port = parse_http(http)
        if not _is_loopback(host) and token is None:
            if allow_write:
                raise ConfigError(f"--http {http} with --allow-write and no token would let anyone who reaches "
                                  "it change the knowledge base; add --token-env VAR")
            console.print(f"[yellow]warning:[/] listening on {host} without a token; anyone who reaches it can "
                          "read the knowledge base (use --token-env)")
        info["url"] = f"http://{'[' + host + ']' if ':' in host else host}:{port}/mcp"
        if json_out:
            emit_json(info)
        console.print(f"Strata MCP serves {info['kbs']} at [bold]{info['url']}[/] "
                      f"({'bearer token' if token else 'no token'}; tools: {', '.join(info['tools'])})",  # type: ignore[arg-type]
                      highlight=False)
        import uvicorn

        pool.get()  # connect the default knowledge base now: a broken configuration fails here, with its exit code
        uvicorn.run(http_app(server, host=host, token=token), host=host, port=port, log_level="warning")
    finally:
        pool.close()
