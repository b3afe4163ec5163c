"""``strata eval retrieval --suite DIR``: the manifest's checks, the ratios and hop breakdown, and one small suite
end to end in its throwaway Neo4j servers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kg.app.cli import app
from kg.app.cli import commands as _commands  # noqa: F401 - registers the commands
from kg.app.evaluation.retrieval import MethodRanking, QuestionRanking, RetrievalReport
from kg.app.evaluation.suite import Suite, hop_recalls, ratios
from kg.errors import LoaderError
from kg.llm import OfflineLLM
from tests.conftest import cli_output

SUITE = Path(__file__).resolve().parents[1] / "data" / "retrieval_suite"


def _manifest(folder: Path, sets: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.json").write_text(json.dumps({"sets": sets}), "utf-8")
    return folder


def test_the_shipped_suite_reads_and_has_one_tuning_set() -> None:
    suite = Suite.read(SUITE)
    assert [s.name for s in suite.sets] == ["hotpotqa", "hotpotqa_untitled", "wiki_named", "wiki_composed",
                                            "wiki_composed_untitled", "case_study"]
    assert [s.name for s in suite.sets if s.role == "tune"] == ["hotpotqa_untitled"]
    composed = json.loads((SUITE / "wiki_composed.json").read_text("utf-8"))
    # MuSiQue-style: no question names the title of any passage of its chain, bridge or first hop.
    for record in composed:
        for paragraph in record["paragraphs"]:
            assert paragraph["title"].split(" (")[0] not in record["question"], record["question"]
    # The untitled chains: the same questions, each gold passage in the untitled corpus under an opaque title.
    untitled = json.loads((SUITE / "wiki_composed_untitled.json").read_text("utf-8"))
    corpus = {(p["title"], p["text"]) for p in json.loads((SUITE / "wiki_untitled_corpus.json").read_text("utf-8"))}
    assert [r["question"] for r in untitled] == [r["question"] for r in composed]
    for record in untitled:
        for paragraph in record["paragraphs"]:
            assert re.fullmatch(r"P[0-9a-f]{8}", paragraph["title"])
            assert (paragraph["title"], paragraph["text"]) in corpus


@pytest.mark.parametrize(("sets", "field"), [
    ([], "sets"),
    ([{"name": "a", "dataset": "q.json"}, {"name": "a", "dataset": "q.json"}], "sets"),
    ([{"name": "bad name", "dataset": "q.json"}], "sets.0.name"),
    ([{"name": "a", "dataset": "q.json", "role": "train"}], "sets.0.role"),
    ([{"name": "a", "dataset": "missing.json"}], "sets.0.dataset"),
    ([{"name": "a", "dataset": "q.json", "corpus": "missing.json"}], "sets.0.corpus"),
])
def test_a_bad_manifest_names_its_field(tmp_path: Path, sets: object, field: str) -> None:
    folder = _manifest(tmp_path / "suite", sets)
    (folder / "q.json").write_text("[]", "utf-8")
    with pytest.raises(LoaderError) as error:
        Suite.read(folder)
    assert error.value.path == str(folder / "suite.json")
    assert error.value.location == field


def test_a_folder_without_manifest_or_with_broken_json_is_named(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match="no suite manifest"):
        Suite.read(tmp_path)
    (tmp_path / "suite.json").write_text('{"sets": [', "utf-8")
    with pytest.raises(LoaderError, match="invalid JSON") as error:
        Suite.read(tmp_path)
    assert error.value.location == "line 1"


def test_ratios_divide_by_each_baseline_and_leave_a_zero_baseline_empty() -> None:
    results: dict[str, dict[str, float | None]] = {
        "bm25": {"recall@5": 0.5}, "dense": {"recall@5": 0.0}, "strata": {"recall@5": 0.75}}
    out = ratios(results, [5])
    assert out["strata"] == {"bm25@5": 1.5, "dense@5": None}
    assert out["bm25"]["bm25@5"] == 1.0


def test_recall_per_hop_count_comes_from_the_gold_ranks() -> None:
    def question(qid: str, ranks: list[int | None]) -> QuestionRanking:
        gold = [f"{qid}-g{i}" for i in range(len(ranks))]
        return QuestionRanking(id=qid, type=None, question="?", gold=gold,
                               methods={"bm25": MethodRanking(top=[], gold_ranks=ranks)})

    report = RetrievalReport(dataset="d", n_questions=3, n_scored=3, n_passages=9, embedder="e",
                             llm=OfflineLLM().accounting.report(), results={"bm25": {"recall@2": 0.0}},
                             questions=[question("a", [1, 7]), question("b", [None, 2]),
                                        question("c", [3, 1, None])])
    counts, by_hops = hop_recalls(report, [2, 5])
    assert counts == {"2": 2, "3": 1}
    assert by_hops["bm25"]["2"] == {"recall@2": 0.5, "recall@5": 0.5}
    assert by_hops["bm25"]["3"] == {"recall@2": pytest.approx(1 / 3, abs=1e-4),
                                    "recall@5": pytest.approx(2 / 3, abs=1e-4)}


def test_suite_needs_exactly_one_of_dataset_and_suite() -> None:
    result = CliRunner().invoke(app, ["eval", "retrieval", "--methods", "bm25"])
    assert result.exit_code == 2 and "--dataset or --suite" in cli_output(result)


@pytest.mark.neo4j
@pytest.mark.slow
def test_eval_suite_runs_every_set_and_prints_one_table(tmp_path: Path) -> None:
    suite = _manifest(tmp_path / "suite", [
        {"name": "hotpotqa", "dataset": str(SUITE / "hotpotqa_train.json"), "role": "tune"},
        {"name": "case_study", "dataset": str(SUITE / "case_study.json"),
         "corpus": str(SUITE / "case_study_corpus.json")},
    ])
    out, per_question = tmp_path / "suite.json", tmp_path / "questions"
    result = CliRunner().invoke(app, [
        "eval", "retrieval", "--suite", str(suite), "--limit", "6", "--k", "2,5",
        "--methods", "bm25,dense,fulltext,strata", "--json", str(out), "--per-question", str(per_question),
    ], env={"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": ""})
    assert result.exit_code == 0, cli_output(result)
    report = json.loads(out.read_text("utf-8"))
    assert [s["name"] for s in report["sets"]] == ["hotpotqa", "case_study"]
    assert report["ks"] == [2, 5]
    hotpotqa, cases = report["sets"]
    assert hotpotqa["role"] == "tune" and hotpotqa["report"]["n_questions"] == 6
    assert cases["report"]["n_questions"] == 2 and cases["report"]["n_passages"] > 50  # the corpus file's
    for result_set in report["sets"]:
        results = result_set["report"]["results"]
        assert set(results) == {"bm25", "dense", "fulltext", "strata"}
        for method, scores in results.items():
            expected = scores["recall@5"] / results["bm25"]["recall@5"] if results["bm25"]["recall@5"] else None
            assert result_set["ratios"][method]["bm25@5"] == (pytest.approx(expected, abs=1e-3)
                                                              if expected is not None else None)
            # Hop counts partition the scored questions; recall over them weighs back to the overall figure.
            total = sum(result_set["hops"].values())
            assert total == result_set["report"]["n_scored"]
            weighted = sum(n * result_set["by_hops"][method][h]["recall@5"] for h, n in result_set["hops"].items())
            assert weighted / total == pytest.approx(scores["recall@5"], abs=1e-3), (method, result_set["name"])
    assert sorted(p.name for p in per_question.iterdir()) == ["case_study.jsonl", "hotpotqa.jsonl"]
    text = cli_output(result)
    assert "strata eval retrieval --suite" in text and "hotpotqa (tune)" in text
