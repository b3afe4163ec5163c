"""``strata eval qa`` and ``strata eval show``: answer quality, evidence and cost per method, and one
question's record read back from a report."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import typer

from kg.app.cli.app import announce_local_llm, console, emit_json, eval_app, settings_of, write_json
from kg.embeddings import make_embedder
from kg.errors import ConfigError
from kg.llm import LLM, OfflineLLM, make_llm
from kg.settings import LLMSettings
from kg.shared.redaction import remember
from reasoning import METHODS


def judge_settings(answering: LLMSettings, model: str | None, base_url: str | None,
                    api_key: str | None) -> LLMSettings | None:
    """The judge's endpoint when one of the ``--judge-*`` options is given (None: the answering model
    judges). Unset parts are the answering model's; its per-task overrides do not apply to the judge."""
    if model is None and base_url is None and api_key is None:
        return None
    judge = answering.model_copy(update={
        "base_url": base_url or answering.base_url, "model": model or answering.model, "task_models": {},
        **({"api_key": api_key} if api_key else {}),
    })
    if judge.offline:
        raise ConfigError("the judge needs an endpoint: --judge-base-url or STRATA_LLM_BASE_URL")
    return LLMSettings.model_validate(judge.model_dump())


@eval_app.command("qa")
def eval_qa(
    ctx: typer.Context,
    dataset: Path = typer.Option(..., "--dataset", exists=True, help="QA questions (HotpotQA/MuSiQue layout)."),
    corpus: Path = typer.Option(None, "--corpus", exists=True,
                                help="Passage corpus (full-corpus protocol). Default: the sampled questions' own "
                                     "paragraphs (PIKE-RAG's protocol)."),
    methods: str = typer.Option("naive-r,decompose", "--methods", help=f"Comma-separated: {', '.join(METHODS)}."),
    limit: int = typer.Option(None, "--limit", help="Only the first N questions."),
    json_path: Path = typer.Option(..., "--json", help="Write the JSON report here; the PNG chart and each "
                                   "question's record as it is made (.records.jsonl) go beside it."),
    judge_model: str = typer.Option(None, "--judge-model", envvar="STRATA_JUDGE_MODEL",
                                    help="Judge with this model (default: the answering model)."),
    judge_base_url: str = typer.Option(None, "--judge-base-url", envvar="STRATA_JUDGE_BASE_URL",
                                       help="The judge's OpenAI-compatible endpoint (default: the answering one)."),
    judge_api_key: str = typer.Option(None, "--judge-api-key", envvar="STRATA_JUDGE_API_KEY", show_default=False,
                                      help="The judge endpoint's API key (better in STRATA_JUDGE_API_KEY)."),
    offline_layers: bool = typer.Option(False, "--offline-layers",
                                        help="Build the distilled layers offline even when a model answers: the "
                                             "run then pays only for the answers (the report says so)."),
) -> None:
    """Per method and question type: EM, F1, precision, recall, LLM-judged accuracy, evidence recall and
    precision, calls, tokens, seconds and failures per question, in a throwaway Neo4j."""
    from kg.app.evaluation.qa import (
        QACorpus,
        QuestionRecord,
        evaluate,
        isolated_kb,
        plot_report,
        questions_of,
    )
    from kg.app.evaluation.runner import layers_for
    from reasoning import answer

    settings = settings_of(ctx)
    chosen = [m.strip() for m in methods.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise typer.BadParameter(f"unknown method(s) {unknown}: choose from {', '.join(METHODS)}")
    remember(judge_api_key)
    judging = judge_settings(settings.llm, judge_model, judge_base_url, judge_api_key)
    questions = questions_of(dataset, limit)
    kb_corpus = QACorpus.of(dataset, corpus, limit=limit)
    console.print(f"{len(questions)} questions, {len(kb_corpus.documents)} passages ({kb_corpus.protocol})",
                  highlight=False)
    announce_local_llm(settings)
    embedder = make_embedder(settings.embedder, cache_dir=settings.cache_dir)
    total = len(questions) * len(chosen)
    done = 0
    # Each record is kept as it is made, so a long run on a slow model can be read (and survives) before the end.
    json_path.parent.mkdir(parents=True, exist_ok=True)
    records_path = json_path.with_suffix(".records.jsonl")
    records_path.write_text("", "utf-8")

    def progress(r: QuestionRecord) -> None:
        nonlocal done
        done += 1
        with records_path.open("a", encoding="utf-8") as out:
            out.write(r.model_dump_json() + "\n")
        outcome = f"FAILED {r.failed}" if r.failed else f"F1 {r.scores.f1:.2f}"
        console.print(f"[{done}/{total}] {r.method} {r.id}: {outcome}, {r.calls} calls, {r.seconds:.1f} s",
                      highlight=False)

    with ExitStack() as stack:
        llm = stack.enter_context(make_llm(settings.llm, cache_dir=settings.cache_dir))
        judge_llm: LLM | None = (stack.enter_context(make_llm(judging, cache_dir=settings.cache_dir)) if judging
                                 else None if llm.offline else llm)
        builder = OfflineLLM() if offline_layers else llm
        store, distilled = stack.enter_context(
            isolated_kb(settings, embedder, builder, kb_corpus.documents, layers=layers_for(chosen)))
        if distilled is not None:
            console.print(f"distilled {', '.join(distilled.layers)} "
                          f"({'offline' if distilled.offline else distilled.llm.summary()})", highlight=False)
        report = evaluate(
            questions, chosen, lambda q, m: answer(q, store=store, embedder=embedder, llm=llm, method=m),
            dataset=dataset.name, corpus=kb_corpus, llm=llm, judge_llm=judge_llm, progress=progress,
            distillation=distilled,
        )
    write_json(json_path, report.model_dump(mode="json"))
    chart = plot_report(report, json_path.with_suffix(".png"))
    console.print(report.table(), highlight=False, soft_wrap=True)
    if report.results and all(r.accuracy is None for r in report.results.values()):
        console.print("no judge (offline): no LLM-judged accuracy" + (
            "; offline answers are extractive" if report.llm.offline else ""))
    console.print(f"llm: {report.llm.summary()}", highlight=False)
    if report.judge is not None:
        console.print(f"judge: {report.judge.summary()}", highlight=False)
    console.print(f"report: {json_path}  chart: {chart}  records as they came: {records_path}")


@eval_app.command("show")
def eval_show(
    report_path: Path = typer.Argument(..., exists=True, dir_okay=False, help="A report `strata eval qa` wrote."),
    question: str = typer.Option(None, "--question", help="Show this question's record for every method."),
    json_out: bool = typer.Option(False, "--json", help="Print the records (or the per-method results) as JSON."),
) -> None:
    """The table of an `eval qa` report, or one question's records: prediction, scores, evidence, cost, trace."""
    from kg.app.evaluation.qa import QAReport, render_question

    report = QAReport.read(report_path)
    if question is None:
        if json_out:
            emit_json({name: r.model_dump(mode="json") for name, r in report.results.items()})
        else:
            console.print(f"{report.dataset}: {report.n_questions} questions, {report.n_passages} passages "
                          f"({report.protocol}), LLM {report.llm.model or 'offline'}", highlight=False)
            console.print(report.table(), highlight=False, soft_wrap=True)
        return
    records = report.records(question)
    if not records:
        raise typer.BadParameter(f"no question {question!r} in {report_path}", param_hint="--question")
    if json_out:
        emit_json([r.model_dump(mode="json") for r in records])
    else:
        console.print(render_question(records), highlight=False, markup=False, soft_wrap=True)
