"""The ``strata`` command line: every command has --help and --json, config hides secrets, stats per layer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from kg.app.cli import app
from kg.app.cli import commands as _commands  # noqa: F401  (registers the commands)
from kg.app.demo import CORPUS
from kg.store.base import GraphStore
from tests.conftest import TestServer, cli_output

runner = CliRunner()


def private_env(**values: str) -> dict[str, str | None]:
    """CliRunner's env is laid over os.environ: drop (None) every STRATA_* of the caller's, so a user's
    STRATA_KB or STRATA_LLM_BASE_URL never reaches the command under test."""
    return {**{k: None for k in os.environ if k.startswith("STRATA_")}, "COLUMNS": "200", **values}


def server_env(neo4j_server: TestServer, home: Path) -> dict[str, str | None]:
    return private_env(STRATA_HOME=str(home), STRATA_NEO4J_URI=neo4j_server.uri, STRATA_NEO4J_USER=neo4j_server.user,
                       STRATA_NEO4J_PASSWORD=neo4j_server.password, STRATA_EMBEDDER="hash")


def command_paths() -> list[list[str]]:
    def walk(command: Any, prefix: list[str]) -> list[list[str]]:
        # Typer ships its own click, so groups are recognised by their sub-commands.
        if hasattr(command, "commands"):
            return [p for name, sub in command.commands.items() for p in walk(sub, [*prefix, name])]
        return [prefix]
    return walk(typer.main.get_command(app), [])


def test_every_command_has_help_and_json() -> None:
    paths = command_paths()
    assert {"serve", "demo", "config", "stats"} <= {p[-1] for p in paths}
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env=private_env())
        assert result.exit_code == 0, (path, result.output)
        assert "--json" in result.output, f"strata {' '.join(path)} has no --json"


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_config_never_shows_secrets(tmp_path: Path, json_flag: list[str]) -> None:
    env = private_env(STRATA_HOME=str(tmp_path), STRATA_LLM_API_KEY="sk-live-0123456789abcdef",
                      STRATA_LLM_BASE_URL="https://llm.example/v1", STRATA_NEO4J_URI="neo4j://db.example:7687",
                      STRATA_NEO4J_PASSWORD="neo4j-pass-abcdef")
    result = runner.invoke(app, ["config", *json_flag], env=env)
    assert result.exit_code == 0, cli_output(result)
    assert "https://llm.example/v1" in result.output  # the configuration is shown...
    assert "sk-live-0123456789abcdef" not in result.output  # ...but not its secrets
    assert "neo4j-pass-abcdef" not in result.output
    if json_flag:
        data = json.loads(result.stdout)
        assert data["llm"]["api_key"] == data["neo4j"]["password"] == "**********"


def test_stats_counts_per_layer_and_index_state(neo4j_server: TestServer, store: GraphStore, tmp_path: Path) -> None:
    env = server_env(neo4j_server, tmp_path)
    loaded = runner.invoke(app, ["load", str(CORPUS / "gearbox-history.md"), "--json", "-"], env=env)
    assert loaded.exit_code == 0, cli_output(loaded)
    result = runner.invoke(app, ["stats", "--json"], env=env)
    assert result.exit_code == 0, cli_output(result)
    data = json.loads(result.stdout)
    assert data["layers"]["information-resource"] == 1
    assert data["layers"]["corpus"] == data["nodes"]["Section"] + data["nodes"]["Chunk"] + data["nodes"]["Table"] > 1
    # `load` distils atoms and triples by default: the distilled layer counts exactly those nodes.
    distilled = ("Atom", "Fact", "Entity", "Tag", "Row", "Topic", "Route", "FactItem", "SuperTopic", "SuperFact")
    assert data["layers"]["distilled"] == sum(data["nodes"][label] for label in distilled) > 0
    assert data["nodes"]["Atom"] > 0
    assert data["relationships"]["HAS_CHUNK"] == data["nodes"]["Chunk"]
    assert {i["name"]: i["state"] for i in data["indexes"]}["chunk_text"] == "ONLINE"
    table = runner.invoke(app, ["stats"], env=env)
    assert table.exit_code == 0 and "information-resource" in table.output and "chunk_text" in table.output


def test_delete_by_a_path_relative_to_the_current_folder(neo4j_server: TestServer, store: GraphStore,
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = server_env(neo4j_server, tmp_path / "home")
    (tmp_path / "notes").mkdir()
    shutil.copy(CORPUS / "gearbox-history.md", tmp_path / "notes" / "history.md")
    monkeypatch.chdir(tmp_path)
    loaded = runner.invoke(app, ["load", "notes/history.md", "--json", "-"], env=env)
    assert loaded.exit_code == 0, cli_output(loaded)

    monkeypatch.chdir(tmp_path / "notes")  # another folder, another relative spelling of the same file
    deleted = runner.invoke(app, ["delete", "./history.md", "--json"], env=env)
    assert deleted.exit_code == 0, cli_output(deleted)
    assert json.loads(deleted.stdout)["source"] == str((tmp_path / "notes" / "history.md").resolve())
    assert store.query("MATCH (d:Document) RETURN count(d) AS n") == [{"n": 0}]
    again = runner.invoke(app, ["delete", "history.md"], env=env)
    assert again.exit_code != 0 and "no document with id or source 'history.md'" in str(again.exception)


def test_the_load_table_shows_the_chunks_a_replacement_kept(neo4j_server: TestServer, store: GraphStore,
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = server_env(neo4j_server, tmp_path / "home")
    paragraphs = [" ".join(f"Turbine {n} at Kestrel Ridge was serviced in week {week}: its gearbox oil was sampled "
                           f"and its blades were inspected for erosion." for week in range(12)) for n in range(10)]
    source = tmp_path / "log.md"
    source.write_text("# Log\n\n" + "\n\n".join(paragraphs) + "\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["load", "log.md", "--distill", "none"], env=env).exit_code == 0
    source.write_text("# Log\n\n" + "\n\n".join([*paragraphs, "Turbine 8 was added in May."]) + "\n", "utf-8")
    replaced = runner.invoke(app, ["load", "log.md", "--distill", "none", "--json", str(tmp_path / "r.json")], env=env)
    assert replaced.exit_code == 0, cli_output(replaced)
    kept = json.loads((tmp_path / "r.json").read_text("utf-8"))["files"][0]["kept_chunks"]
    header, row = (line for line in replaced.output.splitlines() if "┃ chunks" in line or "│ log.md" in line)
    cells = dict(zip((c.strip() for c in header.split("┃")), (c.strip() for c in row.split("│")), strict=True))
    assert kept > 0 and cells["kept"] == str(kept) and int(cells["chunks"]) > kept


def test_delete_a_qa_corpus_file_deletes_its_passages(neo4j_server: TestServer, store: GraphStore,
                                                     tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = server_env(neo4j_server, tmp_path / "home")
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"title": "Kestrel Ridge", "text": "Thirty turbines."},
                                  {"title": "Gannet Bank", "text": "Twenty-four turbines."}]), "utf-8")
    (tmp_path / "other.md").write_text("# Other\n\nKept.\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["load", ".", "--distill", "none"], env=env).exit_code == 0
    deleted = runner.invoke(app, ["delete", "corpus.json", "--json"], env=env)
    assert deleted.exit_code == 0, cli_output(deleted)
    assert sorted(d["title"] for d in json.loads(deleted.stdout)) == ["Gannet Bank", "Kestrel Ridge"]
    assert [r["t"] for r in store.query("MATCH (d:Document) RETURN d.title AS t")] == ["Other"]


def test_load_estimate_counts_the_chosen_layers_tasks_and_writes_nothing(tmp_path: Path) -> None:
    # No Neo4j is configured or started: the estimate parses and chunks only.
    env = private_env(STRATA_HOME=str(tmp_path / "home"))
    source = str(CORPUS / "gearbox-history.md")

    def estimate(layers: str) -> dict[str, Any]:
        result = runner.invoke(app, ["load", source, "--estimate", "--distill", layers], env=env)
        assert result.exit_code == 0, cli_output(result)
        return dict(json.loads(result.output))

    # Atoms and triples chosen together share one call per chunk (and tags with them).
    default = estimate("atoms,triples")
    assert set(default["by_task"]) == {"enhanced_chunk", "atoms_triples"}
    assert default["files"] == 1 and default["chunks"] > 0 and default["failed_files"] == 0
    assert all(entry["calls"] == default["chunks"] for entry in default["by_task"].values())
    assert default["distill_calls_per_chunk"] == 1.0 and default["calls"] == 2 * default["chunks"]
    wider = estimate("atoms,triples,tags,pseudograph")
    assert set(wider["by_task"]) == {"enhanced_chunk", "chunk_knowledge", "tag_classes", "tag_aliases",
                                     "fact_items", "mind_map"}
    assert wider["by_task"]["tag_classes"]["calls"] == 1 and wider["by_task"]["mind_map"]["calls"] == 1
    assert wider["prompt_tokens"] > default["prompt_tokens"]
    # --json FILE writes the same estimate there instead of stdout.
    written = runner.invoke(app, ["load", source, "--estimate", "--json", str(tmp_path / "e.json")], env=env)
    assert written.exit_code == 0 and json.loads((tmp_path / "e.json").read_text("utf-8")) == default
    alone = estimate("atoms")
    assert set(alone["by_task"]) == {"enhanced_chunk", "atomic_questions"}
    assert set(estimate("none")["by_task"]) == {"enhanced_chunk"}
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").rglob("neo4j.conf"))


def test_cache_clear_empties_what_the_clients_read(tmp_path: Path) -> None:
    from kg.shared.response_cache import ResponseCache

    cache_dir = tmp_path / "cache"
    for name, entries in (("llm", 3), ("embeddings", 2)):
        cache = ResponseCache.named(cache_dir, name)
        for i in range(entries):
            cache.put(f"{name}-{i}", "value")
        cache.close()
    env = private_env(STRATA_CACHE_DIR=str(cache_dir), STRATA_HOME=str(tmp_path / "home"))
    only_llm = runner.invoke(app, ["cache", "clear", "--only", "llm", "--json"], env=env)
    assert only_llm.exit_code == 0, cli_output(only_llm)
    assert json.loads(only_llm.output)["removed"] == {"llm": 3}
    assert len(ResponseCache.named(cache_dir, "llm")) == 0 and len(ResponseCache.named(cache_dir, "embeddings")) == 2
    both = runner.invoke(app, ["cache", "clear", "--json"], env=env)
    assert json.loads(both.output)["removed"] == {"llm": 0, "embeddings": 2}
    assert runner.invoke(app, ["cache", "clear", "--only", "prompts"], env=env).exit_code == 2


def test_an_error_is_printed_with_its_notes_and_exit_code() -> None:
    # What a throwaway server's death adds to the error its user sees (kg/provisioning/throwaway.py).
    script = """
import kg.app.cli as cli
from kg.errors import Neo4jUnavailable
def fail() -> None:
    exc = Neo4jUnavailable("no Neo4j answers at neo4j://127.0.0.1:1")
    exc.add_note("the throwaway Neo4j (pid 1) had exited. Log tail: Started.")
    raise exc
cli.app = fail
cli.main()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 4, done.stderr
    assert "no Neo4j answers" in done.stderr and "had exited. Log tail: Started." in done.stderr
