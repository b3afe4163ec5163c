"""``strata neo4j start|stop|status``."""

from __future__ import annotations

import typer

from kg.app.cli.app import console, emit_json, neo4j_app, settings_of
from kg.errors import Neo4jError
from kg.provisioning import NEO4J_VERSION, docker_server, ensure_endpoint, local_server, recorded_server_kind
from kg.shared.processes import await_quiet
from kg.store.neo4j_store import Neo4jGraphStore
from kg.store.schema import schema_status


@neo4j_app.command("start")
def start(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Start Neo4j (downloading its jars once), or find the one already running."""
    settings = settings_of(ctx)
    server = local_server(settings)
    if settings.neo4j is None and recorded_server_kind(settings) != "docker" and not server.jars_installed():
        console.print(f"Downloading Neo4j {NEO4J_VERSION} jars from Maven Central (once)...")
    endpoint = ensure_endpoint(settings)
    data = {"kind": endpoint.kind, "bolt_uri": endpoint.uri, "browser_url": endpoint.browser_url,
            "user": endpoint.user, "started": endpoint.started,
            "password_file": str(server.password_file) if endpoint.kind != "remote" else None}
    if json_out:
        emit_json(data)
        return
    verb = "Started" if endpoint.started else "Already running:"
    console.print(f"{verb} Neo4j ({endpoint.kind}) at [bold]{endpoint.uri}[/]")
    if endpoint.browser_url:
        bolt = f"bolt://localhost:{server.settings.bolt_port}"
        console.print(f"Browser: [bold]{endpoint.browser_url}[/]  (connect URL {bolt})")
        console.print(f"User: {endpoint.user}   Password: in {server.password_file} "
                      f"(cat it, or set STRATA_NEO4J_PASSWORD for a server of your own)")


@neo4j_app.command("stop")
def stop(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON."),
         settle: bool = typer.Option(False, "--settle", help="First wait (at most an hour) until the local server "
                                     "has finished its background work: Lucene's merges of index segments after a "
                                     "large load.")) -> None:
    """Stop this knowledge base's Neo4j cleanly, local or Docker, whichever it was started as (data is kept).

    A local server still busy when stopped is named in a warning (``busy`` in the JSON): after a large load that
    is Lucene merging index segments, and a merge the stop interrupts waits for the next write into that index,
    with searches slower until then (docs/scaling.md, "Merges the server never did").
    """
    settings = settings_of(ctx)
    kind = recorded_server_kind(settings) or "local"
    busy = False
    if kind == "docker":
        stopped = docker_server(settings).stop()
    else:
        server = local_server(settings)
        if (pid := server.running_pid()) is not None:
            if settle and not json_out:
                console.print("Waiting for Neo4j's background work (index merges) to finish...")
            _, quiet = await_quiet(pid) if settle else await_quiet(pid, window_s=1.0, timeout_s=0.0)
            busy = not quiet
        stopped = server.stop()
    if json_out:
        emit_json({"kind": kind, "stopped": stopped, "busy": busy})
        return
    if busy:
        console.print("[yellow]Neo4j was still busy (after a large load: merging index segments); the merges it "
                      "did not finish wait for the next write into those indexes, and searches are slower until "
                      "then. `strata neo4j stop --settle` waits for them.[/]")
    console.print("Stopped." if stopped else "Neo4j was not running.")


@neo4j_app.command("status")
def status(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Server version, addresses, data folder, and whether Strata's schema is installed."""
    settings = settings_of(ctx)
    server = local_server(settings)
    data: dict[str, object]
    if settings.neo4j is not None:
        uri, user, password = settings.neo4j.uri, settings.neo4j.user, settings.neo4j.password.get_secret_value()
        data = {"kind": "remote", "bolt_uri": uri, "http_url": None, "data_dir": None}
    elif recorded_server_kind(settings) == "docker":
        docker = docker_server(settings)
        uri, user, password = server.bolt_uri, "neo4j", server.password()
        data = {"kind": "docker", "project": docker.project, "container": docker.project, "bolt_uri": uri,
                "http_url": server.http_url, "browser_url": f"{server.http_url}/browser/",
                "data_dir": f"docker volume {docker.volume}"}
        if not docker.running():
            data.update(running=False, version=None, schema_installed=None)
            _show(data, json_out)
            raise typer.Exit(1)
    else:
        pid = server.running_pid()
        uri, user = server.bolt_uri, "neo4j"
        password = server.password() if server.password_file.exists() else ""
        data = {"kind": "local", "running": pid is not None, "pid": pid, "bolt_uri": uri,
                "http_url": server.http_url, "browser_url": f"{server.http_url}/browser/",
                "data_dir": str(server.data_dir), "jars": str(server.lib_dir)}
        if pid is None:
            data.update(version=None, schema_installed=None)
            _show(data, json_out)
            raise typer.Exit(1)
    try:
        with Neo4jGraphStore.connect(uri, user, password, settings.neo4j.database if settings.neo4j else None) as store:
            schema = schema_status(store)
            data.update(running=True, version=store.server_version(), schema_installed=schema.installed,
                        embedder=schema.embedder, dimensions=schema.dimensions)
    except Neo4jError as exc:
        data.update(running=False, error=str(exc))
        _show(data, json_out)
        raise typer.Exit(1) from exc
    _show(data, json_out)


def _show(data: dict[str, object], json_out: bool) -> None:
    if json_out:
        emit_json(data)
    else:
        for key, value in data.items():
            console.print(f"{key:>17}: {value}", highlight=False)
