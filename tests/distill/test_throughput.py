"""The LLM path of `strata distill` keeps the endpoint busy (several calls in flight, up to its max
concurrency), shows progress with a rate and an ETA on stderr, and resumes where it stopped: a second run
makes no call."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kg.store.base import GraphStore
from kg.testing.scripted_llm import Item, Reply, ScriptedLLMServer
from tests.conftest import REPO, TestServer
from tests.distill.conftest import Responder, questions_from
from tests.hardening.graphs import strata_env

pytestmark = [pytest.mark.neo4j]
PROGRESS = re.compile(r"distill atoms: (\d+)/(\d+) chunks \([\d.]+%\), [\d.]+ chunks/s, ETA \S+")


def strata(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kg.app.cli", *args], env=env, capture_output=True, text=True,
                          check=False, cwd=REPO, timeout=600)


def slow(reply: dict[str, Any]) -> Item:
    # A delay per call, so calls of one batch are at the server together when the client sends them so.
    return Reply(json.dumps(reply), delay_s=0.3)


def test_llm_distillation_overlaps_calls_shows_progress_and_resumes(
        tmp_path: Path, neo4j_server: TestServer, store: GraphStore) -> None:
    corpus = tmp_path / "sites.json"
    corpus.write_text(json.dumps([{"title": f"Site {n}", "text": f"Site North{n} runs {n + 3} turbines. Alice "
                                   f"Smith repaired its gearbox in {2000 + n}."} for n in range(12)]), "utf-8")
    env = strata_env(neo4j_server.uri, neo4j_server.user, neo4j_server.password, tmp_path / "home")
    loaded = strata(env, "load", str(corpus), "--distill", "none")
    assert loaded.returncode == 0, loaded.stderr
    responder = Responder()
    # The atoms layer chosen alone asks its own task, once per chunk.
    responder.tasks["atomic_questions"] = lambda text: slow(questions_from(text))
    with ScriptedLLMServer(default=responder) as server:
        llm_env = {**env, "STRATA_LLM_BASE_URL": server.base_url, "STRATA_LLM_MODEL": "test-model",
                   "STRATA_LLM_MAX_CONCURRENCY": "4", "STRATA_LLM_CACHE": "0"}
        first = strata(llm_env, "distill", "--only", "atoms", "--batch-size", "6")
        assert first.returncode == 0, first.stderr
        assert len(server.chat_requests()) == 12  # one call per chunk
        assert 1 < server.max_in_flight <= 4  # calls overlap, within the endpoint's concurrency
        lines = [m.groups() for m in PROGRESS.finditer(first.stderr)]
        assert lines[0] == ("0", "12") and lines[-1] == ("12", "12"), first.stderr

        again = strata(llm_env, "distill", "--only", "atoms")
        assert again.returncode == 0, again.stderr
        assert len(server.chat_requests()) == 12  # resumed: nothing left, no call made
    assert store.query("MATCH (c:Chunk) WHERE NOT 'atoms' IN coalesce(c.distilled, []) "
                       "RETURN count(c) AS n")[0]["n"] == 0
