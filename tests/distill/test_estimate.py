"""`strata load --estimate` predicts what the load then spends: the same calls per task, and prompt tokens
within 25%, counted at the scripted server for the load's default layers (atoms and triples: one shared call
per chunk) and for the LLM default layers (tags too: one call per chunk, the tag classes once, aliases per
batch). The scripted model takes each window whole, so the enhanced chunks are the structural ones the
estimate counts; how a real model splits is the estimate's error on real models. Reply lengths come from the
model's usage history once it has one: a second estimate predicts completion tokens from what the load spent."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kg.layers.distilled.estimate import MIN_OBSERVED_CALLS
from kg.store.base import GraphStore
from kg.testing.scripted_llm import ScriptedLLMServer
from tests.conftest import REPO, TestServer
from tests.distill.conftest import Responder, section
from tests.hardening.graphs import strata_env

pytestmark = [pytest.mark.neo4j]
KEYS = ("head", "head_type", "relation", "tail", "tail_type")


def strata(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kg.app.cli", *args], env=env, capture_output=True, text=True,
                          check=False, cwd=REPO, timeout=600)


def write_corpus(folder: Path) -> Path:
    folder.mkdir()
    sites = [{"title": f"Site North{n}", "text": f"Site North{n} runs {n + 3} turbines on the ridge. Alice Smith "
              f"repaired the gearbox of turbine T-{n} in {2000 + n}, after the oil samples showed metal wear."}
             for n in range(10)]
    (folder / "sites.json").write_text(json.dumps(sites), "utf-8")
    (folder / "handbook.md").write_text(
        "# Gearbox handbook\n\n## Oil sampling\n\nGearbox oil is sampled every six months. The sample goes to the "
        "laboratory in Bergen, which reports iron and copper particles.\n\n## Repairs\n\nA gearbox with metal "
        "wear is repaired within two weeks. The repair crew replaces the bearings and flushes the oil.\n", "utf-8")
    return folder


def responder() -> Responder:
    def site(text: str) -> str:
        found = re.search(r"Site North\d+|Gearbox oil|A gearbox", text)
        return found.group(0) if found else "the text"

    def triples(text: str) -> list[dict[str, str]]:
        return [dict(zip(KEYS, (site(text), "Site", "repaired_by", "Alice Smith", "Person"), strict=True))]

    def shared(text: str) -> dict[str, Any]:
        chunk = section(text, "Chunk:")
        return {"questions": [f"What happened at {site(chunk)}?", f"Who repaired {site(chunk)}?"],
                "triples": triples(chunk)}

    r = Responder()
    r.tasks.update({
        # The whole window is one chunk, with a summary of a usual length.
        "enhanced_chunk": lambda text: {
            "sentences": max(1, len(re.findall(r"^\d+\. ", section(text, "Window:"), re.M))),
            "summary": "The document describes wind farm sites, their turbines, and the gearbox repairs and oil "
                       "samples that the maintenance crews report for each of them."},
        "atoms_triples": shared,
        "chunk_knowledge": lambda text: {**shared(text), "tags": {"site": [site(section(text, "Chunk:"))]}},
        "tag_classes": lambda _t: {"classes": [{"name": "site", "description": "the wind farm site"},
                                               {"name": "activity", "description": "maintenance work"}]},
        "tag_aliases": lambda _t: {"aliases": {}},
    })
    return r


@pytest.mark.parametrize("layers", ["atoms,triples", "atoms,triples,tables,tags"])
def test_the_estimate_predicts_the_calls_and_prompt_tokens_the_load_spends(
        layers: str, tmp_path: Path, neo4j_server: TestServer, store: GraphStore) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    with ScriptedLLMServer(default=responder()) as server:
        env = {**strata_env(neo4j_server.uri, neo4j_server.user, neo4j_server.password, tmp_path / "home"),
               "STRATA_LLM_BASE_URL": server.base_url, "STRATA_LLM_MODEL": "test-model", "STRATA_LLM_CACHE": "0",
               "STRATA_LLM_MAX_CONCURRENCY": "2",  # batches of 8 chunks: several alias calls with tags
               "STRATA_CACHE_DIR": str(tmp_path / "cache")}  # the usage history starts empty
        estimated = strata(env, "load", str(corpus), "--estimate", "--distill", layers)
        assert estimated.returncode == 0, estimated.stderr
        estimate = json.loads(estimated.stdout)
        assert server.chat_requests() == []  # the estimate spends nothing
        loaded = strata(env, "load", str(corpus), "--distill", layers, "--json", str(tmp_path / "load.json"))
        assert loaded.returncode == 0, loaded.stderr
        at_server = Counter(r.task for r in server.chat_requests())
        spent_prompt = sum((r.usage or {}).get("prompt_tokens", 0) for r in server.chat_requests())
        report = json.loads((tmp_path / "load.json").read_text("utf-8"))
        assert all(not entry["failed"] for entry in report["distill"]["layers"].values())
        spent_completion = {task: sum((r.usage or {}).get("completion_tokens", 0) for r in server.chat_requests(task))
                            for task in at_server}
        again = strata(env, "load", str(corpus), "--distill", layers)
        assert again.returncode == 0, again.stderr
        assert len(server.chat_requests()) == sum(at_server.values())  # a re-load spends nothing
        informed = json.loads(strata(env, "load", str(corpus), "--estimate", "--distill", layers).stdout)
    predicted = {task: entry["calls"] for task, entry in estimate["by_task"].items()}
    assert predicted == dict(at_server), (predicted, at_server)
    assert estimate["chunks"] == store.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
    assert {t: u["calls"] for t, u in report["llm"]["by_task"].items()} == dict(at_server)
    shared = "chunk_knowledge" if "tags" in layers else "atoms_triples"
    assert at_server[shared] == estimate["chunks"]  # one distillation call per chunk ...
    assert estimate["distill_calls_per_chunk"] <= 1.5  # ... and a few for the corpus and its batches
    error = abs(estimate["prompt_tokens"] - spent_prompt) / spent_prompt
    assert error <= 0.25, (estimate["prompt_tokens"], spent_prompt)
    for task in ("enhanced_chunk", shared):  # the per-chunk tasks, which are nearly all of it
        spent = sum((r.usage or {}).get("prompt_tokens", 0) for r in server.chat_requests(task))
        guess = estimate["by_task"][task]["prompt_tokens"]
        assert abs(guess - spent) <= 0.25 * spent, (task, guess, spent)
    # Before any history the reply lengths are typical ones; after the load, the model's own.
    assert {entry["completion_basis"] for entry in estimate["by_task"].values()} == {"typical"}
    for task, calls in at_server.items():
        entry = informed["by_task"][task]
        if calls >= MIN_OBSERVED_CALLS:
            assert entry["completion_basis"] == f"observed over {calls} calls", (task, entry)
            assert abs(entry["completion_tokens"] - spent_completion[task]) <= 0.25 * spent_completion[task]
        else:
            assert entry["completion_basis"] == "typical", (task, entry)
    assert informed["model"] == "test-model"
