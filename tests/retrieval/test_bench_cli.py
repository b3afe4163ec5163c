"""End to end: ``strata bench query`` and ``strata bench scale`` on small generated corpora in their own throwaway
Neo4j. They check the JSON contract and that every method ran, never a timing (speed is what the benchmarks
report)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kg.app.bench.query import BENCH_METHODS, generate_passages
from kg.app.bench.scale import (
    PROGRESS_FILE,
    ScaleProgress,
    _decade_queries,
    _server,
    _Vectors,
    decade_sizes,
    run_scale_bench,
)
from kg.app.cli import app
from kg.app.cli import commands as _commands  # noqa: F401 - registers the commands
from kg.app.evaluation.runner import EVAL_LAYERS
from kg.embeddings import make_embedder
from kg.errors import ConfigError
from kg.layers.distilled import distill
from kg.llm import OfflineLLM
from kg.settings import Settings
from kg.store.queries import COUNT_LABEL
from tests.conftest import cli_output


def test_generated_passages_are_deterministic_and_name_a_neighbour() -> None:
    first, again = generate_passages(50), generate_passages(50)
    assert [d.text for d in first] == [d.text for d in again]
    assert len({d.title for d in first}) == 50
    assert all(" near Place " in d.text for d in first)


@pytest.mark.neo4j
@pytest.mark.slow
def test_bench_query_reports_every_method_and_the_numpy_yardstick(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "query", "--passages", "60", "--queries", "5", "--json", str(out)],
                                env={"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": ""})
    assert result.exit_code == 0, cli_output(result)
    report = json.loads(out.read_text("utf-8"))
    assert set(report) == {"passages", "results", "numpy_exact", "ratio_to_numpy", "distilled"}, \
        report.get("unavailable")
    assert report["passages"] == 60
    assert set(report["results"]) == set(report["ratio_to_numpy"]) == set(BENCH_METHODS)
    # The atom paths are timed over a distilled layer, built offline.
    assert sum(report["distilled"]["atoms"].values()) > 0
    for latency in [*report["results"].values(), report["numpy_exact"]]:
        assert set(latency) == {"p50_ms", "p95_ms"}
        assert 0 < latency["p50_ms"] <= latency["p95_ms"]


def test_decades_grow_tenfold_up_to_the_passages_asked() -> None:
    assert decade_sizes(1_000_000) == [10_000, 100_000, 1_000_000]
    assert decade_sizes(250_000) == [10_000, 100_000, 250_000]
    assert decade_sizes(200, 60) == [60, 200]
    assert decade_sizes(5_000) == [5_000]


def test_bench_scale_times_its_first_round_on_other_queries_than_its_second() -> None:
    first, second = _decade_queries(10_000, 50, "first:10000"), _decade_queries(10_000, 50, 10_000)
    assert len(first) == len(second) == 50
    assert not set(first) & set(second)
    assert _decade_queries(10_000, 50, 10_000) == second  # the timed round is the same at every run


def test_generated_passages_are_the_same_in_any_batch() -> None:
    whole = generate_passages(30)
    assert [d.text for d in generate_passages(10, start=20)] == [d.text for d in whole[20:]]


_DECADE = {"passages", "ingest_chunks_per_s", "distill_chunks_per_s", "distill_layer_seconds", "index_seconds",
           "distill_cpu_ms_per_chunk", "distill_cpu_ms_per_chunk_by_process", "distill_layer_cpu_ms_per_chunk",
           "store_bytes_per_chunk", "settle_cpu_ms_per_chunk",
           "settle_seconds", "store_mb", "client_peak_mb", "server_peak_mb", "query", "query_first_round",
           "numpy_exact", "runs", "server_memory"}


@pytest.mark.neo4j
@pytest.mark.slow
def test_bench_scale_grows_one_store_and_reports_each_decade(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    # A small server: the report is tested here, not the sizing (a knowledge base's default heap, RAM/8, would
    # add 3 GB beside the suite's other servers).
    result = CliRunner().invoke(app, ["bench", "scale", "--passages", "200", "--first-decade", "60", "--queries", "5",
                                      "--json", str(out)],
                                env={"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": "",
                                     "STRATA_NEO4J_HEAP": "1g", "STRATA_NEO4J_PAGECACHE": "512m"})
    assert result.exit_code == 0, cli_output(result)
    report = json.loads(out.read_text("utf-8"))
    assert set(report) == {"decades"}
    assert [d["passages"] for d in report["decades"]] == [60, 200]
    for decade in report["decades"]:
        assert set(decade) == _DECADE, decade.get("unavailable")
        assert set(decade["query"]) == set(decade["query_first_round"]) == set(BENCH_METHODS)
        assert set(decade["distill_layer_seconds"]) == {"atoms", "triples", "tags", "pseudograph"}
        assert decade["server_memory"] == [{"heap": "1g", "pagecache": "512m"}]
        assert set(decade["distill_layer_cpu_ms_per_chunk"]) == set(decade["distill_layer_seconds"])
        cpu = [decade["distill_cpu_ms_per_chunk_by_process"], *decade["distill_layer_cpu_ms_per_chunk"].values()]
        assert all(set(by_process) == {"client", "server"} for by_process in cpu)
        # the layers' shares are booked within the whole distillation's CPU
        layers_ms = sum(ms for by_process in cpu[1:] for ms in by_process.values())
        assert layers_ms <= decade["distill_cpu_ms_per_chunk"] + 0.01
        assert sum(cpu[0].values()) == pytest.approx(decade["distill_cpu_ms_per_chunk"], abs=0.01)
        numbers = [decade[key] for key in _DECADE - {"query", "query_first_round", "numpy_exact",
                                                     "distill_layer_seconds", "server_memory",
                                                     "distill_cpu_ms_per_chunk_by_process",
                                                     "distill_layer_cpu_ms_per_chunk"}]
        numbers += decade["distill_layer_seconds"].values()
        numbers += [ms for by_process in cpu for ms in by_process.values()]
        for latency in [*decade["query"].values(), *decade["query_first_round"].values(), decade["numpy_exact"]]:
            assert set(latency) == {"p50_ms", "p95_ms"}
            numbers += [latency["p50_ms"], latency["p95_ms"]]
        assert all(isinstance(n, int | float) and n > 0 for n in numbers), decade


@pytest.mark.neo4j
@pytest.mark.slow
def test_bench_distill_times_the_default_one_call_per_chunk(tmp_path: Path) -> None:
    """The LLM half answers the call distillation makes by default (atoms_triples), so it times that path, not
    a failed call and a fallback to one call per layer."""
    out = tmp_path / "distill.json"
    result = CliRunner().invoke(app, ["bench", "distill", "--passages", "12", "--sizes", "300", "--mentions", "20",
                                      "--corpus", str(tmp_path / "none.json"), "--json", str(out)],
                                env={"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": ""})
    assert result.exit_code == 0, cli_output(result)
    report = json.loads(out.read_text("utf-8"))
    calls = report["llm"]["by_task"]
    assert set(calls) == {"atoms_triples"} and report["llm"]["failed"] == 0
    assert calls["atoms_triples"]["calls"] == report["chunks"] == 12
    assert [p["existing_entities"] for p in report["resolution"]] == [300]


class _Stopped(Exception):
    """Stands for whatever ends a long run: a kill, a crash, the end of a working day."""


@pytest.mark.neo4j
@pytest.mark.slow
def test_bench_scale_resumes_a_stopped_run_from_its_store(tmp_path: Path) -> None:
    """A run stopped inside its second decade's ingest continues there when started again on the same folder:
    the first decade as recorded, every passage stored once and distilled, and the decade says it took two runs."""
    settings = Settings.from_env({"STRATA_HOME": str(tmp_path / "home"), "STRATA_LLM_BASE_URL": "",
                                  "STRATA_NEO4J_HEAP": "1g", "STRATA_NEO4J_PAGECACHE": "512m"})
    embedder = make_embedder(settings.embedder, cache_dir=settings.cache_dir)
    folder = tmp_path / "scale"
    seen: list[str] = []

    def stop_in_the_second_decade(message: str) -> None:
        seen.append(message)
        if message.startswith("200 passages: 140 stored"):
            raise _Stopped(message)

    # One method: what is timed is the other test's; this one is about what a stopped run leaves and resumes.
    run = partial(run_scale_bench, settings, embedder, passages=200, first_decade=60, queries=5, methods=["chunk"],
                  warmup=1, store=folder, batch=40)
    with pytest.raises(_Stopped):
        run(progress=stop_in_the_second_decade)
    assert seen[-1].startswith("stopped with 140 passages stored")  # and where the progress is, to resume
    stopped = ScaleProgress.model_validate_json((folder / PROGRESS_FILE).read_text("utf-8"))
    assert [d.passages for d in stopped.decades] == [60] and stopped.written == 140
    assert stopped.current is not None and stopped.current.chunks > 0 and not stopped.current.distilled

    resumed: list[str] = []
    report = run(progress=resumed.append)
    assert [d.passages for d in report.decades] == [60, 200]
    assert report.decades[0] == stopped.decades[0]
    assert [d.runs for d in report.decades] == [1, 2]
    assert [len(d.server_memory) for d in report.decades] == [1, 2]  # one entry a run, kept across the stop
    assert resumed[0].startswith("200 passages: 180 stored")  # the ingest went on at the first unsaved batch
    assert any(m.startswith("200 passages: pseudograph 0 of ") for m in resumed)  # each layer says when it starts
    assert report.decades[1].distill_chunks_per_s > 0 and report.decades[1].ingest_chunks_per_s > 0
    done = ScaleProgress.model_validate_json((folder / PROGRESS_FILE).read_text("utf-8"))
    assert done.current is None and done.written == 200

    with _server(settings, folder / "neo4j") as (store, _, _):
        assert store.read(COUNT_LABEL.render(label="Document"))[0]["count"] == 200
        assert store.read(COUNT_LABEL.render(label="Chunk"))[0]["count"] == done.vector_rows
        again = distill(store, embedder, OfflineLLM(), layers=EVAL_LAYERS)
    assert {name: layer.chunks for name, layer in again.layers.items()} == dict.fromkeys(EVAL_LAYERS, 0)


def test_a_resumed_runs_vectors_drop_what_its_progress_never_saved(tmp_path: Path) -> None:
    """A run killed between appending a batch's vectors and saving its progress left rows no saved passage owns:
    the resumed run starts at the saved rows, and a file shorter than them is refused, naming it."""
    path = tmp_path / "vectors.f32"
    path.write_bytes(np.arange(5 * 4, dtype=np.float32).tobytes())
    vectors = _Vectors(path, dimensions=4, rows=3)
    assert vectors.matrix().shape == (3, 4) and path.stat().st_size == 3 * 4 * 4
    assert vectors.matrix()[2, 3] == 11.0
    with pytest.raises(ConfigError, match=r"vectors\.f32"):
        _Vectors(path, dimensions=4, rows=7)
