"""Helpers of the crash and restart tests: a corpus, the CLI in a child process, and a graph's fingerprint
to compare an interrupted-then-resumed build with a clean one."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kg.store.base import GraphStore
from tests.conftest import REPO

SITES = ("North", "South", "East", "West", "Harbour", "Ridge", "Valley", "Delta")
PEOPLE = ("Alice Smith", "Bob Jones", "Carla Diaz", "Dev Patel", "Eva Novak")


def write_corpus(root: Path, documents: int = 12, paragraphs: int = 12) -> Path:
    """Markdown reports of a wind-farm operator, each with sections, many chunks and named entities."""
    root.mkdir(parents=True, exist_ok=True)
    for n in range(documents):
        site = f"{SITES[n % len(SITES)]} {n}"
        parts = [f"# Report {n}: Site {site}\n"]
        for p in range(paragraphs):
            person = PEOPLE[(n + p) % len(PEOPLE)]
            if p % 4 == 0:
                parts.append(f"## Section {p} of report {n}\n")
            parts.append(f"Site {site} runs {n + p + 3} turbines of model NW-{p}. {person} inspected the gearbox "
                         f"of turbine {p} at Site {site} in {2000 + p}. The inspection found {p} cracks and "
                         f"{n} worn bearings; {person} ordered a repair by Northwind Service.\n")
        (root / f"report{n:02d}.md").write_text("\n".join(parts), "utf-8")
    return root


def strata_env(uri: str, user: str, password: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_")}
    return {**env, "STRATA_HOME": str(home), "STRATA_NEO4J_URI": uri, "STRATA_NEO4J_USER": user,
            "STRATA_NEO4J_PASSWORD": password, "STRATA_EMBEDDER": "hash", "COLUMNS": "200"}


def strata(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kg.app.cli", *args], env=env, capture_output=True, text=True,
                          check=False, cwd=REPO, timeout=600)


def _wait_for(store: GraphStore, probe: str, child: subprocess.Popen[bytes]) -> bool:
    """Poll until ``probe`` (a query returning ``ok``) holds; ``False`` if the child ended first."""
    while child.poll() is None:
        if store.query(probe)[0]["ok"]:
            return True
        time.sleep(0.05)
    return False


def watched(env: dict[str, str], args: list[str], store: GraphStore, probe: str) -> tuple[int, float]:
    """Run the CLI to its end; its exit code and the seconds from the moment ``probe`` first held (its first
    write) to its end: the span in which the kills of :func:`killed_at_random` land."""
    child = subprocess.Popen([sys.executable, "-m", "kg.app.cli", *args], env=env, cwd=REPO,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_for(store, probe, child)
    started = time.monotonic()
    _, err = child.communicate(timeout=600)
    assert child.returncode == 0, err.decode(errors="replace")
    return child.returncode, time.monotonic() - started


def killed_at_random(env: dict[str, str], args: list[str], seed: int | None, store: GraphStore, probe: str,
                     span_s: float) -> float:
    """Run the CLI in a child process and, once ``probe`` holds (it has begun writing), SIGKILL it (and
    anything it started) after a random delay in ``[0, span_s)`` chosen by ``seed``, or at once for ``None``;
    returns the delay. A child that finished first is fine: the caller checks that some kill interrupted
    something."""
    delay = 0.0 if seed is None else random.Random(seed).uniform(0.0, 1.0) * span_s
    child = subprocess.Popen([sys.executable, "-m", "kg.app.cli", *args], env=env, cwd=REPO, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if _wait_for(store, probe, child):
        try:
            child.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    return delay


def timed(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    result = strata(env, *args)
    return result, time.monotonic() - started


def fingerprint(store: GraphStore) -> dict[str, Any]:
    """What a build made, independent of when: nodes per label, relationships per type, every document with
    its hash and counts, every chunk id, and the distillation state of every chunk."""
    labels = store.query("MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS n ORDER BY label")
    rels = store.query("MATCH ()-[r]->() RETURN type(r) AS type, count(*) AS n ORDER BY type")
    docs = store.query(
        "MATCH (d:Document) OPTIONAL MATCH (d)-[:HAS_SECTION*]->(:Section)-[:HAS_CHUNK]->(c:Chunk) "
        "RETURN d.source AS source, d.sha256 AS sha256, count(c) AS chunks ORDER BY source")
    chunks = store.query("MATCH (c:Chunk) RETURN c.id AS id, c.distilled AS distilled ORDER BY id")
    return {"labels": {r["label"]: r["n"] for r in labels}, "relationships": {r["type"]: r["n"] for r in rels},
            "documents": [(Path(r["source"]).name, r["sha256"], r["chunks"]) for r in docs],
            "chunks": [(r["id"], sorted(r["distilled"] or [])) for r in chunks]}
