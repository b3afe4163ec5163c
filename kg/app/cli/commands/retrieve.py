"""``strata retrieve``, ``strata eval retrieval`` and ``strata bench query``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from kg.app.cli.app import app, bench_app, console, emit_json, eval_app, settings_of, write_json
from kg.app.client import Strata
from kg.embeddings import Embedder, make_embedder
from kg.llm import LLM, make_llm
from kg.retrieval import METHODS
from kg.settings import Settings


def _write(data: dict[str, object], out: Path | None) -> None:
    if out is None or str(out) == "-":
        emit_json(data)
    else:
        write_json(out, data)
        console.print(f"wrote {out}", highlight=False)


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise typer.BadParameter(f"--k expects numbers like 2,5,10, got {text!r}") from exc
    if not ks or ks[0] < 1:
        raise typer.BadParameter("--k needs positive numbers")
    return ks


@app.command("retrieve")
def retrieve(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question or query text."),
    method: str = typer.Option("strata", "--method", help=f"One of: {', '.join(METHODS)}."),
    k: int = typer.Option(5, "--k", min=1, help="How many chunks."),
    document: list[str] = typer.Option([], "--document", help="Only these document ids (repeatable)."),
    json_out: bool = typer.Option(False, "--json", help="Print the hits as JSON."),
) -> None:
    """Retrieve chunks for a question and explain each hit (which path, atom, fact or entity found it)."""
    from kg.retrieval import RetrievalFilter

    if method not in METHODS:
        raise typer.BadParameter(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    where = RetrievalFilter(document_ids=list(document)) if document else None
    with Strata.connect(settings_of(ctx)) as kb:
        hits = kb.retrieve(question, method=method, k=k, where=where)
    if json_out:
        emit_json([h.model_dump(mode="json") for h in hits])
        return
    table = Table("#", "score", "title", "page", "chars", "why", "text", title=f"strata retrieve ({method})")
    for n, hit in enumerate(hits, start=1):
        table.add_row(str(n), f"{hit.score:.4f}", hit.title[:40], str(hit.page or ""),
                      f"{hit.char_start}-{hit.char_end}", hit.explain()[:80], hit.text[:120].replace("\n", " "))
    console.print(table)


def _models(settings: Settings) -> tuple[Embedder, LLM]:
    return (make_embedder(settings.embedder, cache_dir=settings.cache_dir),
            make_llm(settings.llm, cache_dir=settings.cache_dir))


@eval_app.command("retrieval")
def eval_retrieval(
    ctx: typer.Context,
    dataset: Path = typer.Option(None, "--dataset", exists=True, dir_okay=False,
                                 help="Questions: HotpotQA/2Wiki JSON or MuSiQue JSON/JSONL."),
    suite: Path = typer.Option(None, "--suite", exists=True, file_okay=False,
                               help="Run every set of a suite folder (its suite.json; scripts/make_suite.py) and "
                                    "print one table of methods x sets, instead of --dataset."),
    corpus: Path = typer.Option(None, "--corpus", exists=True, dir_okay=False,
                                help="Passage corpus (default: the union of the questions' paragraphs)."),
    ks: str = typer.Option("2,5,10", "--k", help="Cut-offs for recall, comma-separated."),
    methods: str = typer.Option(None, "--methods", help="Comma-separated methods (default: all, with bm25, dense)."),
    limit: int = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    kb: str = typer.Option(None, "--kb", help="Keep the evaluation graph in a named server between runs."),
    out: Path = typer.Option(None, "--json", help="Write the JSON report here ('-' or omitted: stdout)."),
    per_question: Path = typer.Option(None, "--per-question", dir_okay=False,
                                      help="Also write each question's gold passages and every method's top "
                                           "passages and gold ranks here, as JSON Lines (with --suite: a "
                                           "folder, one SET.jsonl a set)."),
) -> None:
    """Passage recall@k, supporting-sentence P/R/F1 and ms/query for every retrieval method and baseline,
    in a throwaway Neo4j (never your knowledge base)."""
    from kg.app.evaluation.retrieval import BASELINES, DEFAULT_METHODS, RetrievalEvalConfig, run_retrieval_eval

    chosen = [m.strip() for m in methods.split(",") if m.strip()] if methods else list(DEFAULT_METHODS)
    unknown = [m for m in chosen if m not in (*BASELINES, *METHODS)]
    if unknown:
        raise typer.BadParameter(f"unknown methods {unknown}; choose from {', '.join((*BASELINES, *METHODS))}")
    if (dataset is None) == (suite is None):
        raise typer.BadParameter("give --dataset or --suite (one of them)")
    settings = settings_of(ctx)
    embedder, llm = _models(settings)
    if suite is not None:
        if corpus is not None:
            raise typer.BadParameter("--corpus is the suite's, per set (suite.json)", param_hint="--corpus")
        _eval_suite(suite, _ks(ks), chosen, limit, kb, settings, embedder, llm, out, per_question)
        return
    config = RetrievalEvalConfig(dataset=dataset, corpus=corpus, ks=_ks(ks), methods=chosen, limit=limit, kb=kb)
    report = run_retrieval_eval(config, settings, embedder, llm,
                                progress=lambda msg: console.print(msg, highlight=False))
    _write(report.to_json(), out)
    if per_question is not None:
        per_question.write_text(report.question_lines(), "utf-8")
        console.print(f"wrote {per_question}", highlight=False)
    table = Table("method", *[f"R@{k}" for k in config.ks], "SP F1", "ms/q", title="strata eval retrieval")

    def cell(value: float | None) -> str:  # None: nothing to score (no gold passages or sentences)
        return "" if value is None else f"{value:.3f}"

    for name, scores in report.results.items():
        table.add_row(name, *[cell(scores[f"recall@{k}"]) for k in config.ks], cell(scores["sp_f1"]),
                      f"{scores['ms_per_query']:.1f}")
    console.print(table)
    if len(report.types) > 1:  # one type would repeat the table above
        cut = 5 if 5 in config.ks else config.ks[0]
        by_type = Table("method", *[f"{kind} ({n})" for kind, n in report.types.items()],
                        title=f"recall@{cut} per question type")
        for name, types in report.by_type.items():
            by_type.add_row(name, *[cell(types.get(kind, {}).get(f"recall@{cut}")) for kind in report.types])
        console.print(by_type)


def _eval_suite(folder: Path, ks: list[int], methods: list[str], limit: int | None, kb: str | None,
                settings: Settings, embedder: Embedder, llm: LLM, out: Path | None,
                per_question: Path | None) -> None:
    from kg.app.evaluation.retrieval import RetrievalReport
    from kg.app.evaluation.suite import Suite, SuiteSet, run_suite

    def keep_questions(entry: SuiteSet, report: RetrievalReport) -> None:
        if per_question is not None:
            per_question.mkdir(parents=True, exist_ok=True)
            (per_question / f"{entry.name}.jsonl").write_text(report.question_lines(), "utf-8")

    report = run_suite(Suite.read(folder), ks=ks, methods=methods, limit=limit, kb=kb, settings=settings,
                       embedder=embedder, llm=llm, progress=lambda msg: console.print(msg, highlight=False),
                       per_set=keep_questions)
    _write(report.model_dump(mode="json"), out)
    cut = 5 if 5 in ks else ks[0]
    table = Table("method", *[f"{s.name}{' (tune)' if s.role == 'tune' else ''}" for s in report.sets],
                  title=f"strata eval retrieval --suite: R@{'/'.join(map(str, ks))}; x bm25, x dense at @{cut}")
    for method in methods:
        cells = []
        for result in report.sets:
            scores = result.report["results"].get(method)
            if scores is None:
                cells.append(result.report.get("unavailable", {}).get(method, "")[:30])
                continue
            recall = "/".join("" if scores[f"recall@{k}"] is None else f"{scores[f'recall@{k}']:.3f}" for k in ks)
            ratio = result.ratios[method]

            def times(value: float | None) -> str:
                return "-" if value is None else f"{value:.2f}x"

            cells.append(f"{recall}  {times(ratio[f'bm25@{cut}'])} {times(ratio[f'dense@{cut}'])}")
        table.add_row(method, *cells)
    _print_wide(table)
    for result in report.sets:
        groups = [(f"{n} hops", n, result.by_hops) for n in result.hops]
        types = result.report["types"]
        if len(types) > 1:
            groups += [(kind, kind, result.report["by_type"]) for kind in types]
        if len(groups) < 2:
            continue
        detail = Table("method", *[f"{label} ({result.hops.get(key, types.get(key))})" for label, key, _ in groups],
                       title=f"{result.name}: recall@{cut} per hop count and question type")
        for method in methods:
            row = [src.get(method, {}).get(key, {}).get(f"recall@{cut}") for _, key, src in groups]
            detail.add_row(method, *["" if v is None else f"{v:.3f}" for v in row])
        _print_wide(detail)


def _print_wide(table: Table) -> None:
    """Print ``table`` whole: into a file or a pipe at the width it needs (a console that is not a terminal is
    80 columns, and a table of six sets is wider), on a terminal with cells too wide folded onto more lines
    instead of losing their end."""
    for column in table.columns:
        column.overflow = "fold"
    if console.is_terminal:
        console.print(table)
        return
    width = console.width
    console.width = max(width, 12 + 34 * len(table.columns))
    try:
        console.print(table)
    finally:
        console.width = width


@bench_app.command("query")
def bench_query(
    ctx: typer.Context,
    passages: int = typer.Option(10_000, "--passages", min=10, help="Number of passages."),
    corpus: Path = typer.Option(None, "--corpus", exists=True, dir_okay=False,
                                help="Use this QA corpus's passages instead of generated ones."),
    queries: int = typer.Option(100, "--queries", min=5, help="Timed queries per method."),
    out: Path = typer.Option(None, "--json", help="Write the JSON report here ('-' or omitted: stdout)."),
) -> None:
    """p50/p95 ms per query for each retrieval method, and exact numpy top-k over the same vectors."""
    from kg.app.bench.query import run_query_bench

    settings = settings_of(ctx)
    embedder, llm = _models(settings)
    report = run_query_bench(settings, embedder, llm, passages=passages, corpus=corpus, queries=queries,
                             progress=lambda msg: console.print(msg, highlight=False))
    _write(report.to_json(), out)
