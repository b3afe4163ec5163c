"""Several `strata distill` processes over one knowledge base split the pending chunks between them: each
claims its own batches (leases in the graph), so together they build exactly the graph one process builds,
with no distilled node duplicated or missing and no chunk distilled twice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kg.store.base import GraphStore
from tests.conftest import REPO, TestServer
from tests.hardening.graphs import fingerprint, strata_env, timed, write_corpus

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]
# Small batches, so each layer is many claims and the two workers interleave.
DISTILL = ["distill", "--batch-size", "4"]


def test_two_distill_processes_split_the_work_and_build_the_single_process_graph(
        tmp_path: Path, neo4j_server: TestServer, store: GraphStore) -> None:
    env = strata_env(neo4j_server.uri, neo4j_server.user, neo4j_server.password, tmp_path / "home")
    corpus = write_corpus(tmp_path / "corpus", documents=16)
    load = ["load", str(corpus), "--distill", "none"]

    store.run_autocommit("meta/wipe")
    assert timed(env, *load)[0].returncode == 0
    chunks = store.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
    single, _ = timed(env, *DISTILL, "--json", str(tmp_path / "single.json"))
    assert single.returncode == 0, single.stderr
    clean = fingerprint(store)
    assert clean["labels"].get("Atom", 0) > 0 and clean["labels"].get("Fact", 0) > 0

    store.run_autocommit("meta/wipe")
    assert timed(env, *load)[0].returncode == 0
    workers = [subprocess.Popen([sys.executable, "-m", "kg.app.cli", *DISTILL, "--json", str(tmp_path / f"w{n}.json")],
                                env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
               for n in range(2)]
    errors = [w.communicate(timeout=600)[1] for w in workers]
    assert [w.returncode for w in workers] == [0, 0], errors
    assert fingerprint(store) == clean
    reports: list[dict[str, Any]] = [json.loads((tmp_path / f"w{n}.json").read_text("utf-8")) for n in range(2)]
    for layer in ("atoms", "triples", "tables"):
        # Every chunk distilled once, by one of the two: the counts add up to the chunks, never more.
        assert sum(r["layers"][layer]["chunks"] for r in reports) == chunks, layer
    assert sum(r["layers"]["atoms"]["created"].get("Atom", 0) for r in reports) == clean["labels"]["Atom"]
    assert store.query("MATCH (c:Chunk) WHERE c.lease_owner IS NOT NULL RETURN count(c) AS n")[0]["n"] == 0


def _fusion_groups(store: GraphStore) -> set[frozenset[str]]:
    rows = store.query("MATCH (s)-[:SIMILAR]->(x) WHERE s:SuperTopic OR s:SuperFact "
                       "RETURN s.id AS super_id, collect(x.id) AS members")
    return {frozenset(r["members"]) for r in rows}


def test_two_pseudo_graph_processes_fuse_into_the_single_process_groups(
        tmp_path: Path, neo4j_server: TestServer, store: GraphStore) -> None:
    # Each worker fuses every pending topic and fact item once its own chunks are done, so the two fuse the same
    # nodes at the same time: fusion ids come from the members and a group's write absorbs the fusion nodes its
    # members already have, so the two must still leave each group once, whole.
    env = strata_env(neo4j_server.uri, neo4j_server.user, neo4j_server.password, tmp_path / "home")
    corpus = write_corpus(tmp_path / "corpus", documents=16)
    for n in range(0, 16, 2):  # revised editions: the same parts and statements in other documents, to fuse
        report = corpus / f"report{n:02d}.md"
        (corpus / f"report{n:02d}-revised.md").write_text(report.read_text("utf-8") + "\nRevised.\n", "utf-8")
    load = ["load", str(corpus), "--distill", "none"]
    pseudograph = [*DISTILL, "--only", "pseudograph", "--fuse"]

    store.run_autocommit("meta/wipe")
    assert timed(env, *load)[0].returncode == 0
    single, _ = timed(env, *pseudograph)
    assert single.returncode == 0, single.stderr
    clean, groups = fingerprint(store), _fusion_groups(store)
    assert clean["labels"].get("SuperTopic", 0) > 0 and clean["labels"].get("SuperFact", 0) > 0

    store.run_autocommit("meta/wipe")
    assert timed(env, *load)[0].returncode == 0
    workers = [subprocess.Popen([sys.executable, "-m", "kg.app.cli", *pseudograph], env=env, cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errors = [w.communicate(timeout=600)[1] for w in workers]
    assert [w.returncode for w in workers] == [0, 0], errors
    assert fingerprint(store) == clean
    assert _fusion_groups(store) == groups
