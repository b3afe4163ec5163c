"""The papers' remaining LLM stages with a real model (qwen2.5-coder-0.5b): PIKE-RAG's auto-tagging and tag
mapping, PG-RAG's pseudo-graph (fact-check items, mind map, fusion), PIKE-RAG's routing L1-L4 with the L3 and
L4 answers end to end, and Algorithm 2's decomposer-training data.

One knowledge base serves every test of the module: the reasoning tests' documents and a small wind-farm
corpus, atoms distilled offline (retrieval needs them, the model does not), then tags and the pseudo-graph
(with fusion) built by the model. The assertions are about what Strata must make of any real model's output,
not about its exact words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import pytest

from kg.app.client import Strata
from kg.app.evaluation.qa import best_f1
from kg.layers.distilled import DistillReport, expand_query_with_tags, rouge_l
from kg.llm import QuestionProposals, make_llm
from kg.settings import LLMSettings, Settings
from kg.store.base import GraphStore
from loaders import split_sentences
from reasoning import Answer, ReasoningSettings
from reasoning.bindings import default_ports
from reasoning.training import (
    PreferencePair,
    SFTExample,
    Trajectory,
    collect_trajectories,
    proposal_scores,
    write_training_data,
)
from tests.conftest import TestServer
from tests.real_llm.conftest import EMBEDDER, offline_kb

pytestmark = [pytest.mark.real_llm, pytest.mark.neo4j, pytest.mark.slow, pytest.mark.timeout(1800)]

WIND = {
    "turbines": """# Turbine fleet

The Nordvik wind farm runs twelve turbines on the coast of Norway. Turbine T-14 lost its gearbox in March 2023
after a bearing overheated; the repair took 12 days and cost EUR 84,000. Vestas supplied the replacement gearbox.
""",
    "policy": """# Maintenance policy

Every gearbox in the [turbine fleet](turbines.md) is inspected twice a year. After the failure of turbine T-14,
the Nordvik wind farm added an oil temperature alarm to each gearbox. The alarm triggers at 80 degrees.
""",
    # One event in two documents of one title: the same topic and fact, what fusion is for.
    "t14-operator": """# Turbine T-14 gearbox failure

Turbine T-14 lost its gearbox in March 2023 after a bearing overheated. The site manager, Ingrid Dahl, signed
the incident report.
""",
    "t14-supplier": """# Turbine T-14 gearbox failure

Turbine T-14 lost its gearbox in March 2023 after a bearing overheated. Vestas shipped the new gearbox from
Aarhus within five days.
""",
}
WORDS = re.compile(r"\w+")


@dataclass
class Built:
    kb: Strata
    distill: DistillReport


@pytest.fixture(scope="module")
def built(session_store: GraphStore, neo4j_server: TestServer, real_llm_settings: LLMSettings,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    root = tmp_path_factory.mktemp("stages")
    wind = root / "wind"
    wind.mkdir()
    for name, text in WIND.items():
        (wind / f"{name}.md").write_text(text, "utf-8")
    offline_kb(session_store, neo4j_server, root, also=[wind], layers=["atoms"])
    settings = Settings.from_env({"STRATA_HOME": str(root / "home"), "STRATA_CACHE_DIR": str(root / "cache")})
    llm = make_llm(real_llm_settings, cache_dir=settings.cache_dir)
    kb = Strata.connect(settings, uri=neo4j_server.uri, user=neo4j_server.user, password=neo4j_server.password,
                        embedder=EMBEDDER, llm=llm)
    try:
        report = kb.distill(layers=["tags", "pseudograph"], retry_failed=False, fuse=True)
        print(report.llm.summary())
        yield Built(kb, report)
    finally:
        kb.close()


def test_tags_are_phrases_of_their_chunks_and_map_questions_to_them(built: Built) -> None:
    kb = built.kb
    entry = built.distill.layers["tags"]
    assert entry.failed == [] and entry.created["Tag"] >= 3, entry
    [meta] = kb.store.query("MATCH (m:StrataMeta) RETURN m.tag_classes AS classes")
    classes = {c["name"] for c in json.loads(meta["classes"])}
    assert len(classes) >= 2 and not classes & {"class_name", "name", "..."}, classes
    tagged = kb.store.query("MATCH (c:Chunk)-[:TAGGED]->(t:Tag) RETURN t.name AS name, t.class AS class, "
                      "t.aliases AS aliases, c.title + ' ' + c.text AS chunk")
    print(json.dumps(tagged, ensure_ascii=False, indent=1)[:3000])
    assert len({r["chunk"] for r in tagged}) >= 4  # most of the seven documents' chunks are tagged
    for r in tagged:
        assert r["class"] in classes and any(w.casefold() in r["chunk"].casefold() for w in WORDS.findall(r["name"])), r
    # The mapping: a question naming a tag's phrase reaches that tag, one naming an alias the model gave reaches
    # its tag, and one about nothing in the corpus reaches none.
    name = max((r["name"] for r in tagged), key=len)
    assert name in expand_query_with_tags(kb.store, f"What is known about {name}?")
    aliased = [(r["name"], a) for r in tagged for a in r["aliases"]]
    assert aliased, "the model gave no colloquial alias for any tag"
    tag, alias = aliased[0]
    assert tag in expand_query_with_tags(kb.store, f"Tell me about {alias}."), (tag, alias)
    assert expand_query_with_tags(kb.store, "Which violinist played at the Salzburg festival?") == []


def test_pseudograph_items_hold_in_their_chunks_under_a_mind_map_of_two_levels(built: Built) -> None:
    kb = built.kb
    entry = built.distill.layers["pseudograph"]
    assert entry.failed == [] and entry.created["FactItem"] >= 10, entry
    items = kb.store.query("MATCH (t:Topic)-[:HAS_ROUTE*1..]->(r:Route)-[:HAS_ITEM]->(f:FactItem)"
                           "-[:ITEM_OF]->(c:Chunk) "
                     "MATCH (t)-[:TOPIC_OF]->(:Document {id: c.document_id}) "
                     "RETURN f.text AS fact, f.path_text AS path, f.rouge_l AS rouge, c.text AS chunk")
    print("\n".join(r["path"] for r in items))
    assert len(items) == entry.created["FactItem"]  # every item hangs under its document's topic
    for r in items:
        assert r["rouge"] >= 0.5 and rouge_l(r["fact"], r["chunk"]).precision >= 0.5, r
        assert len(split_sentences(r["fact"])) == 1, r["fact"]  # one fact an item
    # Maps of two levels (topic > branch > child > fact) for several documents; a 0.5B model flattens some.
    deep = {r["path"].split(" > ")[0] for r in items if len(r["path"].split(" > ")) >= 4}
    assert len(deep) >= 2, [r["path"] for r in items]


def test_fusion_merges_the_same_and_nothing_else(built: Built) -> None:
    kb = built.kb
    topics = kb.store.query("MATCH (s:SuperTopic)-[:SIMILAR]->(t:Topic) RETURN s.id AS id, collect(t.text) AS members, "
                      "count(DISTINCT t.document_id) AS documents")
    facts = kb.store.query("MATCH (s:SuperFact)-[:SIMILAR]->(f:FactItem) RETURN s.id AS id, "
                           "collect(f.text) AS members, "
                     "count(DISTINCT f.document_id) AS documents")
    print(json.dumps({"topics": topics, "facts": facts}, ensure_ascii=False, indent=1))
    # The two reports of the T-14 failure carry one title: their topics meet in a super-topic.
    assert any(any("T-14" in m for m in g["members"]) for g in topics), topics
    for group in [*topics, *facts]:
        assert group["documents"] >= 2
        first, *rest = group["members"]
        assert all(rouge_l(first, other).f1 >= 0.8 for other in rest), group
        assert len({tuple(re.findall(r"\d+", m)) for m in group["members"]}) == 1, group  # no other numbers


def ask(built: Built, question: str) -> Answer:
    out = built.kb.ask(question, method="auto", settings=ReasoningSettings(max_steps=2, atom_threshold=0.2))
    print(question, "->", out.method, out.answer, [c.text[:80] for c in out.citations], out.usage.by_task)
    assert not out.offline and out.usage.by_task.get("question_class") == 1
    route = next(s for s in out.trace if s.kind == "route")
    assert route.detail["classified_by"] == "llm"
    return out


def test_l1_a_factual_question_takes_hybrid_retrieval_and_a_cited_answer(built: Built) -> None:
    out = ask(built, "When was Bob Edwards born?")
    assert (out.question_class, out.method) == ("factual", "auto:hybrid")
    assert "1947" in out.answer and any("1947" in c.text for c in out.citations)


def test_l2_a_multi_hop_question_is_decomposed(built: Built) -> None:
    out = ask(built, "Bob Edwards hosted what show that was later hosted by Renée Montagne?")
    assert out.question_class == "linkable" and out.method == "auto:decompose" and out.decomposition is not None
    assert out.usage.by_task.get("question_proposals", 0) >= 1


def test_l3_a_predictive_question_forecasts_from_the_yearly_series(built: Built) -> None:
    out = ask(built, "How many biosimilars will be approved in 2024?")
    assert (out.question_class, out.method) == ("predictive", "auto:predictive") and out.forecast is not None
    # 10, 12, 14, 16 from 2019 to 2022: two more a year.
    assert out.forecast.series == [(2019, 10.0), (2020, 12.0), (2021, 14.0), (2022, 16.0)], out.forecast
    assert out.forecast.target_year == 2024 and out.forecast.predicted == pytest.approx(20.0)
    assert out.forecast.explanation_source == "llm" and out.forecast.explanation.strip()
    assert any("biosimilars" in c.text for c in out.citations)


def test_l4_a_creative_question_is_answered_by_perspectives_and_a_synthesis(built: Built) -> None:
    out = ask(built, "Suggest ideas to prevent gearbox failures at the Nordvik wind farm.")
    assert (out.question_class, out.method) == ("creative", "auto:creative")
    assert len(out.perspectives) == 3 and all(p.argument.strip() for p in out.perspectives)
    assert out.usage.by_task.get("perspective") == 3 and out.usage.by_task.get("synthesis") == 1
    assert out.answer.strip() and not out.abstained
    cited = {m for p in out.perspectives for m in p.citations}
    assert {c.marker for c in out.citations} <= cited  # the synthesis cites only what a perspective cited


def test_algorithm_2_writes_sft_and_dpo_records_that_load_back(built: Built, tmp_path: Path) -> None:
    kb = built.kb
    settings = ReasoningSettings(rollouts=3, max_steps=2, atom_threshold=0.2)
    ports = default_ports(kb.store, EMBEDDER, kb.llm, settings)
    trajectories = []
    for qid, (question, gold) in enumerate([("In what year was the first host of Morning Edition born?", "1947"),
                                             ("Which company supplied the gearbox of turbine T-14?", "Vestas")]):
        trajectories += collect_trajectories(question, [gold], question_id=f"q{qid}", store=kb.store, llm=kb.llm,
                                             ports=ports, settings=settings, scorer=best_f1)
    for traj in trajectories:
        print(traj.question_id, traj.rollout, traj.score, [s.proposals for s in traj.steps], traj.answer[:100])
    summary = write_training_data(trajectories, tmp_path)
    print(summary["counts"])
    assert summary["counts"]["trajectories"] == 6
    loaded = {name: [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text("utf-8").splitlines()]
              for name in ("trajectories", "sft", "dpo")}
    assert [Trajectory.model_validate(r).score for r in loaded["trajectories"]] == [t.score for t in trajectories]
    # Each rollout is a draw of its own (its own seed): the proposals of one state differ between rollouts.
    firsts = {(t.question_id, tuple(t.steps[0].proposals)) for t in trajectories if t.steps}
    assert len(firsts) > len({t.question_id for t in trajectories}), firsts
    # A DPO pair for every two proposals chosen in one state whose trajectories scored differently, no other.
    expected = sum(1 for _, scores in proposal_scores(trajectories).values()
                   for a, b in combinations(scores.values(), 2) if a != b)
    assert len(loaded["dpo"]) == expected and loaded["sft"], summary["counts"]
    for record in loaded["sft"]:
        SFTExample.model_validate(record)
        assert [m["role"] for m in record["messages"]][-1] == "assistant"
        assert QuestionProposals.model_validate_json(record["messages"][-1]["content"]).proposals
    for record in loaded["dpo"]:
        pair = PreferencePair.model_validate(record)
        preferred, rejected = (QuestionProposals.model_validate_json(o[0]["content"]).proposals
                               for o in (pair.preferred_output, pair.non_preferred_output))
        assert preferred != rejected and pair.input["messages"][-1]["role"] == "user"
