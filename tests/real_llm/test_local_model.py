"""Every LLM stage with a real model: qwen2.5-coder-0.5b behind the local llama.cpp server, on real Neo4j.

Three short documents (English with a table, Chinese, and one that links to the first) are loaded with
enhanced chunking and the default LLM distillation; the assertions are about what a real model's output
must satisfy once Strata has read it, not about its exact words. The thresholds leave room for a small
model's mistakes that Strata counts (``llm.failed``, ``invalid_items``) instead of storing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kg.app.client import Strata
from kg.embeddings.hashing import HashingEmbedder
from kg.layers.corpus.ingest import LoadReport
from kg.layers.distilled import DistillReport
from kg.llm import LLMReport, make_llm
from kg.llm.local import LocalLLMInfo, LocalLLMServer
from kg.settings import LLMSettings, LocalLLMSettings, Settings
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from reasoning import ReasoningSettings
from tests.conftest import TestServer

# The module's build runs inside its first test: on a busy 2-core machine a real model needs its time.
pytestmark = [pytest.mark.real_llm, pytest.mark.neo4j, pytest.mark.slow, pytest.mark.timeout(1800)]

TURBINES = """# Turbine fleet

The Nordvik wind farm runs twelve turbines. Turbine T-14 lost its gearbox in March 2023 after a bearing
overheated; the repair took 12 days and cost EUR 84,000. Vestas supplied the replacement gearbox.

| Turbine | Rated power | Commissioned |
| --- | --- | --- |
| T-14 | 3.6 MW | 2016 |
| T-15 | 3.6 MW | 2017 |
"""

POLICY = """# Maintenance policy

Every gearbox in the [turbine fleet](turbines.md) is inspected twice a year. After the failure of turbine
T-14, the Nordvik wind farm added an oil temperature alarm to each gearbox. The alarm triggers at 80 degrees.
"""

CHINESE = """# 北湖风电场

北湖风电场位于浙江省,共有八台风机。2022年7月,台风导致三号风机的叶片断裂。更换叶片用了九天,费用为六十万元。
"""

CJK = re.compile(r"[\u4e00-\u9fff]")
WORD = re.compile(r"\w{4,}")


@dataclass
class Built:
    kb: Strata
    docs: Path
    load: LoadReport
    distill: DistillReport
    usage: LLMReport


@pytest.fixture(scope="module")
def built(session_store: GraphStore, neo4j_server: TestServer, real_llm_settings: LLMSettings,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    session_store.run_autocommit("meta/wipe")
    embedder = HashingEmbedder(256)
    ensure_schema(session_store, embedder.name, 256)
    root = tmp_path_factory.mktemp("real")
    docs = root / "docs"
    docs.mkdir()
    (docs / "turbines.md").write_text(TURBINES, "utf-8")
    (docs / "policy.md").write_text(POLICY, "utf-8")
    (docs / "beihu.md").write_text(CHINESE, "utf-8")
    settings = Settings.from_env({"STRATA_HOME": str(root / "home"), "STRATA_CACHE_DIR": str(root / "cache")})
    llm = make_llm(real_llm_settings, cache_dir=settings.cache_dir)
    kb = Strata.connect(settings, uri=neo4j_server.uri, user=neo4j_server.user, password=neo4j_server.password,
                        embedder=embedder, llm=llm)
    try:
        load = kb.load([docs])
        distill = kb.distill(retry_failed=False)
        yield Built(kb, docs, load, distill, kb.llm.accounting.report())
    finally:
        kb.close()


def chunks(kb: Strata) -> list[dict[str, str]]:
    return kb.store.query("MATCH (c:Chunk) RETURN c.id AS id, c.text AS text, c.summary AS summary, "
                          "c.document_id AS document_id")


def test_every_file_loads_with_enhanced_chunking_and_every_chunk_has_a_summary(built: Built) -> None:
    assert built.load.chunking == "enhanced (LLM)"
    assert [f.status for f in built.load.files] == ["loaded"] * 3, built.load.to_json()
    found = chunks(built.kb)
    assert found and all((c["summary"] or "").strip() for c in found)
    usage = built.usage
    assert not usage.offline and usage.calls > 0
    assert usage.response_format == "json_object_schema"  # llama-cpp-python refuses json_schema
    assert usage.by_task["enhanced_chunk"].calls > 0
    # A small model fails now and then; Strata must absorb it per chunk, and it must stay rare.
    assert usage.failed <= max(2, usage.calls // 5), usage.summary()


def test_atoms_are_questions_about_their_chunk(built: Built) -> None:
    rows = built.kb.store.query("MATCH (a:Atom)-[:ATOM_OF]->(c:Chunk) RETURN a.text AS atom, a.kind AS kind, "
                                "c.text AS chunk")
    assert rows and {r["kind"] for r in rows} == {"question"}
    questions = [r for r in rows if r["atom"].rstrip().endswith(("?", "?"))]
    assert len(questions) >= 0.6 * len(rows), [r["atom"] for r in rows]

    def about(row: dict[str, str]) -> bool:
        chunk = row["chunk"].casefold()
        return any(w in chunk for w in WORD.findall(row["atom"].casefold())) or bool(
            set(CJK.findall(row["atom"])) & set(CJK.findall(row["chunk"])))

    assert sum(map(about, rows)) >= 0.8 * len(rows), [r["atom"] for r in rows if not about(r)]


def test_a_chinese_chunks_atoms_are_chinese(built: Built) -> None:
    rows = built.kb.store.query("MATCH (a:Atom)-[:ATOM_OF]->(c:Chunk) WHERE c.text CONTAINS '北湖' "
                                "RETURN a.text AS atom")
    assert rows and all(CJK.search(r["atom"]) for r in rows), rows


def test_facts_link_entities_that_occur_in_their_chunk(built: Built) -> None:
    rows = built.kb.store.query("MATCH (h:Entity)<-[:SUBJECT]-(f:Fact)-[:OBJECT]->(t:Entity), "
                                "(f)-[:FACT_OF]->(c:Chunk) RETURN f.head AS head, f.tail AS tail, "
                                "coalesce(c.title, '') + ' ' + c.text + ' ' + coalesce(c.summary, '') AS chunk")
    assert rows
    for row in rows:
        chunk = row["chunk"].casefold()
        for name in (row["head"], row["tail"]):
            # Named in full, or by part of the name ("Edwards" for "Bob Edwards").
            words = [w for w in re.findall(r"\w+", name.casefold()) if len(w) >= 3 or w.isdigit()]
            assert name.casefold() in chunk or any(w in chunk for w in words), (name, row["chunk"][:200])


_COST = ("How much did the gearbox repair of turbine T-14 cost?", "84,000")
_ALARM = ("Which alarm was added after the failure of the turbine that Vestas supplied a gearbox for?", "temperature")
# Known regressions of issue #15's work, seen with qwen2.5-coder-0.5b on 2026-11-24 and kept visible here until
# fixed: decompose's one candidate (no selection call) was the turbine table's chunk, whose row does not state the
# cost, so the checked answer abstains; with the answer prompt's abstention example (v3) the model says the
# two-hop alarm is not in the sources (naive-r), and decompose finds no atom candidate for it.
_ABSTAINS = "0.5B abstains here since the citation check, answer prompt v3 and decompose's budget (a known limit)"


@pytest.mark.parametrize(("question", "expected", "method"), [
    (*_COST, "naive-r"),
    pytest.param(*_COST, "decompose", marks=pytest.mark.xfail(reason=_ABSTAINS, strict=False)),
    pytest.param(*_ALARM, "naive-r", marks=pytest.mark.xfail(reason=_ABSTAINS, strict=False)),
    pytest.param(*_ALARM, "decompose", marks=pytest.mark.xfail(reason=_ABSTAINS, strict=False)),
])
def test_answers_are_generated_prose_with_a_citation_that_holds_the_answer(
    built: Built, method: str, question: str, expected: str
) -> None:
    answer = built.kb.ask(question, method=method, settings=ReasoningSettings(max_steps=2))
    assert not answer.offline and answer.llm is not None and answer.llm.calls + answer.llm.cache_hits > 0
    assert answer.answer.strip() and answer.trace
    assert any(expected.casefold() in c.text.casefold() for c in answer.citations), (
        answer.answer, [c.text[:120] for c in answer.citations])


def test_a_second_start_finds_the_running_server(local_llm: LocalLLMInfo, local_llm_settings: LocalLLMSettings
                                                 ) -> None:
    again = LocalLLMServer(local_llm_settings).start()
    assert (again.pid, again.base_url, again.started) == (local_llm.pid, local_llm.base_url, False)
    assert again.model_file.endswith("qwen2.5-coder-0.5b.gguf") and again.context_tokens == 8192


def test_a_second_load_makes_no_call(built: Built) -> None:
    before = built.kb.llm.accounting.report()
    again = built.kb.load([built.docs])
    built.kb.distill(retry_failed=False)
    after = built.kb.llm.accounting.report()
    assert [f.status for f in again.files] == ["unchanged"] * 3
    assert after.calls == before.calls
