"""The LLM default layers cost one call per chunk (issue #15's bound: <= 1.5 on average, 0 on a re-run): atoms,
triples and tags come from one ``chunk_knowledge`` call per chunk, written per batch with every layer marked,
so the layers' own passes make no call. Counted at the scripted server, through the real client and Neo4j."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.layers.distilled import DEFAULT_LAYERS_LLM, DistillReport, distill
from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.settings import LLMSettings
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from kg.testing.scripted_llm import Reply, ScriptedLLMServer
from tests.distill.conftest import EMBEDDER, Responder, load_passages, section
from tests.hardening.graphs import fingerprint

SITES = {f"Site North{n}": f"Site North{n} runs {n + 3} turbines. Alice Smith repaired its gearbox in {2000 + n}."
         for n in range(6)}
KEYS = ("head", "head_type", "relation", "tail", "tail_type")


def triples_of(chunk: str) -> list[dict[str, str]]:
    site = re.search(r"Site North\d+", chunk)
    if site is None:
        return []
    return [dict(zip(KEYS, t, strict=True)) for t in (
        ("Alice Smith", "Person", "repaired_gearbox_of", site.group(0), "Site"),  # one entity across chunks
        (site.group(0), "Site", "located_in", "Atlantis", "Location"),  # Atlantis: never named, dropped
    )]


def tags_of(chunk: str) -> dict[str, list[str]]:
    site = re.search(r"Site North\d+", chunk)
    return {"site": [site.group(0)] if site else [], "activity": ["gearbox repair"]}


def questions_of(chunk: str) -> list[str]:
    site = re.search(r"Site North\d+", chunk)
    name = site.group(0) if site else "the site"
    return [f"How many turbines does {name} run?", f"When was the gearbox of {name} repaired?",
            f"How many turbines does {name} run?"]  # a duplicate, dropped


def knowledge_from(text: str) -> dict[str, Any]:
    chunk = section(text, "Chunk:")
    return {"questions": questions_of(chunk), "triples": triples_of(chunk), "tags": tags_of(chunk)}


def script(responder: Responder, delay_s: float = 0.0) -> None:
    responder.tasks.update({
        "chunk_knowledge": lambda text: Reply(json.dumps(knowledge_from(text)), delay_s=delay_s),
        "tag_classes": lambda _t: {"classes": [{"name": "site", "description": "the wind farm site"},
                                               {"name": "activity", "description": "maintenance work"}]},
        "tag_aliases": lambda _t: {"aliases": {"gearbox repair": ["gearbox fix"]}},
    })


@pytest.fixture
def endpoint(responder: Responder) -> Iterator[tuple[ScriptedLLMServer, OpenAICompatibleLLM]]:
    with ScriptedLLMServer(default=responder) as server:
        client = client_of(server)
        yield server, client
        client.close()


def client_of(server: ScriptedLLMServer) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(LLMSettings(base_url=server.base_url, model="test-model", timeout_s=5.0,
                                           max_retries=1), cache_dir=None, base_backoff_s=0.01, max_backoff_s=0.02)


def calls(server: ScriptedLLMServer) -> Counter[str]:
    return Counter(r.task or "default" for r in server.chat_requests())


def count(store: GraphStore, query: str, **params: Any) -> int:
    return int(store.query(query, **params)[0]["n"])


def test_default_llm_layers_spend_one_call_per_chunk_and_a_rerun_none(
        kb: GraphStore, tmp_path: Path, responder: Responder,
        endpoint: tuple[ScriptedLLMServer, OpenAICompatibleLLM]) -> None:
    server, llm = endpoint
    script(responder)
    load_passages(kb, tmp_path, SITES)
    chunks = count(kb, "MATCH (c:Chunk) RETURN count(c) AS n")
    report = distill(kb, EMBEDDER, llm)
    assert report.failed == 0 and list(report.layers) == ["atoms", "triples", "tables", "tags"]
    spent = calls(server)
    # One shared call per chunk; the tag classes once for the corpus; the aliases of new tags once per batch.
    assert spent == {"chunk_knowledge": chunks, "tag_classes": 1, "tag_aliases": 1}, spent
    assert sum(spent.values()) / chunks <= 1.5
    for name in DEFAULT_LAYERS_LLM:
        assert report.layers[name].chunks == report.layers[name].pending == chunks, name
    assert report.layers["atoms"].method == report.layers["tags"].method == "llm"
    assert report.llm.by_task["chunk_knowledge"].invalid_items == chunks  # each chunk's Atlantis triple
    # Every atom, fact and tag links to the chunk whose reply named it.
    assert count(kb, "MATCH (a:Atom)-[:ATOM_OF]->(c:Chunk) WHERE a.chunk_id = c.id "
                     "AND a.text CONTAINS split(c.text, ' runs')[0] RETURN count(a) AS n") == 2 * chunks
    assert count(kb, "MATCH (a:Atom) RETURN count(a) AS n") == 2 * chunks
    assert count(kb, "MATCH (f:Fact)-[:FACT_OF]->(c:Chunk) WHERE f.chunk_id = c.id AND c.text CONTAINS f.tail "
                     "RETURN count(f) AS n") == chunks == count(kb, "MATCH (f:Fact) RETURN count(f) AS n")
    assert count(kb, "MATCH (c:Chunk)-[:TAGGED]->(t:Tag {class: 'site'}) WHERE c.text STARTS WITH t.name "
                     "RETURN count(t) AS n") == chunks
    assert count(kb, "MATCH (:Chunk)-[:TAGGED]->(t:Tag {name: 'gearbox repair'}) RETURN count(t) AS n") == chunks
    assert kb.query("MATCH (t:Tag {name: 'gearbox repair'}) RETURN t.aliases AS a")[0]["a"] == ["gearbox fix"]
    assert count(kb, "MATCH (e:Entity {name: 'Alice Smith'})<-[:MENTIONS]-(c:Chunk) RETURN count(c) AS n") == chunks
    assert count(kb, "MATCH (r:Row {kind: 'relation'}) RETURN count(r) AS n") == chunks  # tables read the facts
    assert count(kb, "MATCH (c:Chunk) WHERE size(c.distilled) = 4 AND c.lease_owner IS NULL "
                     "RETURN count(c) AS n") == chunks

    again = distill(kb, EMBEDDER, llm)
    assert calls(server) == spent  # nothing pending: no call
    assert all(entry.chunks == entry.pending == 0 for entry in again.layers.values())
    assert count(kb, "MATCH (a:Atom) RETURN count(a) AS n") == 2 * chunks


def test_a_malformed_reply_fails_its_chunk_in_every_covered_layer_and_keeps_the_others(
        kb: GraphStore, tmp_path: Path, responder: Responder,
        endpoint: tuple[ScriptedLLMServer, OpenAICompatibleLLM]) -> None:
    server, llm = endpoint
    script(responder)
    good = responder.tasks["chunk_knowledge"]
    responder.tasks["chunk_knowledge"] = lambda text: "no JSON here" if "North2 " in text else good(text)
    load_passages(kb, tmp_path, SITES)
    report = distill(kb, EMBEDDER, llm, retry_failed=False)
    bad = kb.query("MATCH (c:Chunk) WHERE c.text CONTAINS 'North2 ' RETURN c.id AS id")[0]["id"]
    for name in ("atoms", "triples", "tags"):
        entry = report.layers[name]
        assert [f.id for f in entry.failed] == [bad] and entry.chunks == len(SITES) - 1, name
        assert "chunk_knowledge" in entry.failed[0].error
    assert report.layers["tables"].failed == []
    state = kb.query("MATCH (c:Chunk {id: $id}) RETURN c.distilled AS done, c.distill_failed AS failed, "
                     "c.lease_owner AS owner", id=bad)[0]
    assert sorted(state["failed"]) == ["atoms", "tags", "triples"] and state["done"] == ["tables"]
    assert state["owner"] is None
    for edge in ("(x:Atom)-[:ATOM_OF]->(c)", "(x:Fact)-[:FACT_OF]->(c)", "(c)-[:TAGGED]->(x:Tag)"):
        assert count(kb, f"MATCH (c:Chunk {{id: $id}}) MATCH {edge} RETURN count(x) AS n", id=bad) == 0
        assert count(kb, f"MATCH (c:Chunk) WHERE c.id <> $id MATCH {edge} RETURN count(DISTINCT c) AS n",
                     id=bad) == len(SITES) - 1
    assert count(kb, "MATCH (c:Chunk) WHERE c.id <> $id AND size(c.distilled) = 4 RETURN count(c) AS n",
                 id=bad) == len(SITES) - 1
    # A load's distillation does not try the failed chunk again; `strata distill` does, with one call.
    before = calls(server)
    distill(kb, EMBEDDER, llm, retry_failed=False)
    assert calls(server) == before
    responder.tasks["chunk_knowledge"] = good
    retried = distill(kb, EMBEDDER, llm)
    assert calls(server) - before == {"chunk_knowledge": 1, "tag_aliases": 1}  # its site tag is new
    assert retried.failed == 0 and retried.layers["triples"].chunks == 1
    assert kb.query("MATCH (c:Chunk {id: $id}) RETURN c.distill_failed AS f", id=bad)[0]["f"] == []
    assert count(kb, "MATCH (:Atom)-[:ATOM_OF]->(c:Chunk {id: $id}) RETURN count(*) AS n", id=bad) == 2


def test_a_layer_chosen_alone_keeps_its_task_and_the_rest_is_picked_up_by_their_own(
        kb: GraphStore, tmp_path: Path, responder: Responder,
        endpoint: tuple[ScriptedLLMServer, OpenAICompatibleLLM]) -> None:
    server, llm = endpoint
    script(responder)
    responder.tasks.update({"atomic_questions": lambda text: {"questions": questions_of(section(text, "Chunk:"))},
                            "triples": lambda text: {"triples": triples_of(section(text, "Text:"))},
                            "chunk_tags": lambda text: {"tags": tags_of(section(text, "Chunk:"))}})
    load_passages(kb, tmp_path, SITES)
    distill(kb, EMBEDDER, llm, layers=["atoms"])
    assert calls(server) == {"atomic_questions": len(SITES)}
    # Atoms are done: the shared call has nothing to claim, and triples and tags ask their own tasks.
    report = distill(kb, EMBEDDER, llm)
    assert calls(server) - Counter({"atomic_questions": len(SITES)}) == {
        "triples": len(SITES), "chunk_tags": len(SITES), "tag_classes": 1, "tag_aliases": 1}
    assert report.failed == 0 and report.layers["atoms"].chunks == 0 and report.layers["tags"].chunks == len(SITES)


def test_two_workers_share_the_calls_and_build_the_single_worker_graph(
        kb: GraphStore, tmp_path: Path, responder: Responder,
        endpoint: tuple[ScriptedLLMServer, OpenAICompatibleLLM]) -> None:
    server, llm = endpoint
    script(responder, delay_s=0.05)  # replies take a while, so the two workers' batches interleave
    sites = {f"Site North{n}": f"Site North{n} runs {n + 3} turbines. Alice Smith repaired its gearbox in "
                               f"{2000 + n}." for n in range(16)}
    load_passages(kb, tmp_path, sites)
    distill(kb, EMBEDDER, llm, batch_size=2)
    single = fingerprint(kb)
    assert calls(server)["chunk_knowledge"] == len(sites)

    kb.run_autocommit("meta/wipe")
    ensure_schema(kb, EMBEDDER.name, EMBEDDER.dimensions)
    load_passages(kb, tmp_path, sites)
    server.requests.clear()
    reports: list[DistillReport] = []
    errors: list[BaseException] = []

    def work() -> None:
        client = client_of(server)
        try:
            reports.append(distill(kb, EMBEDDER, client, batch_size=2))
        except BaseException as exc:  # reported by the test
            errors.append(exc)
        finally:
            client.close()

    workers = [threading.Thread(target=work) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)
    assert not errors and len(reports) == 2
    spent = calls(server)
    assert spent["chunk_knowledge"] == len(sites), spent  # no chunk asked twice
    assert all(r.layers["atoms"].chunks > 0 for r in reports)  # both worked
    for name in DEFAULT_LAYERS_LLM:
        assert sum(r.layers[name].chunks for r in reports) == len(sites), name
    assert fingerprint(kb) == single
    assert count(kb, "MATCH (e:Entity {name: 'Alice Smith'}) RETURN count(e) AS n") == 1
    assert count(kb, "MATCH (c:Chunk) WHERE c.lease_owner IS NOT NULL RETURN count(c) AS n") == 0
