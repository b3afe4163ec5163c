"""``strata demo``: load the sample corpus, build every layer, ask one question of each class.

The corpus (``corpus/``) is five documents of a fictional wind-farm operator, Borealis Wind: a fleet
overview (Markdown), a maintenance policy and a storm incident report (HTML), a gearbox failure history
with a yearly series (Markdown) and a component failure report with a per-site table (PDF). They link
to and name each other, so the information-resource layer has references to follow. Re-running is cheap:
unchanged files are no-ops and only changed documents are distilled again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kg.app.rest.ports import KnowledgeService
from kg.app.rest.views import AskResponse, answer_view
from kg.layers.corpus.ingest import LoadReport
from kg.layers.distilled import ALL_LAYERS

__all__ = ["CORPUS", "QUESTIONS", "DemoQuestion", "DemoReport", "run_demo"]

CORPUS = Path(str(resources.files("kg.app.demo").joinpath("corpus")))


@dataclass(frozen=True)
class DemoQuestion:
    question_class: str
    text: str


QUESTIONS = (
    DemoQuestion("factual", "How often is gearbox oil sampled on Borealis Wind turbines?"),
    DemoQuestion("bridging", "Which turbine model runs at the site that recorded the most gearbox failures in 2024?"),
    DemoQuestion("quantitative", "How many blade-erosion findings were recorded across all sites in 2024, "
                                 "and which site had the most?"),
    DemoQuestion("predictive", "How many gearbox failures should Borealis Wind expect in 2025?"),
    DemoQuestion("creative", "Propose a pre-winter inspection plan for Kestrel Ridge."),
)


@dataclass
class DemoReport:
    kb: str
    offline: bool
    load: LoadReport
    distill: str
    answers: list[AskResponse] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"kb": self.kb, "offline": self.offline, "load": self.load.to_json(), "distill": self.distill,
                "answers": [a.model_dump(mode="json") for a in self.answers], "seconds": round(self.seconds, 1)}


def run_demo(
    service: KnowledgeService,
    *,
    offline: bool,
    console: Console,
    corpus: Path = CORPUS,
    questions: tuple[DemoQuestion, ...] = QUESTIONS,
) -> DemoReport:
    """Load ``corpus`` into ``service``, distil what changed, ask ``questions``; print for people on ``console``."""
    started = time.perf_counter()
    console.rule(f"Strata demo: knowledge base {service.name!r}")
    if offline:
        console.print("[bold yellow]Running OFFLINE[/]: no LLM is configured (STRATA_LLM_BASE_URL is unset). "
                      "Layers that need an LLM are built by offline methods, and answers are composed without one.")
    load = _load(service, corpus, console)
    report = DemoReport(service.name, offline, load, _distill(service, load, console))
    for q in questions:
        view = answer_view(service.name, service.ask(q.text), service.browser_url)
        report.answers.append(view)
        _print_answer(console, q, view)
    report.seconds = time.perf_counter() - started
    console.rule(f"Done in {report.seconds:.1f} s")
    return report


def _load(service: KnowledgeService, corpus: Path, console: Console) -> LoadReport:
    files = sorted(p for p in corpus.iterdir() if p.is_file())
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("loading the sample corpus", total=len(files))

        def step(path: Path, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total, description=f"loading {path.name}")

        load = service.load(files, progress=step)
    console.print(f"Corpus {corpus}: {load.summary()}", highlight=False)
    for f in load.files:
        if f.error:
            console.print(f"[red]{Path(f.path).name}: {f.error}[/]", highlight=False)
    return load


def _distill(service: KnowledgeService, load: LoadReport, console: Console) -> str:
    """Build every distilled layer for the documents that changed, or for all of them while the distilled
    layer is still empty (offline, the layers that need an LLM are built by their offline methods)."""
    changed = [f.document_id for f in load.files if f.status in ("loaded", "replaced") and f.document_id]
    if service.stats().by_layer()["distilled"] == 0:
        changed = [d.id for d in service.documents()]
    if not changed:
        console.print("Distilled layer: up to date (no document changed).")
        return "up to date"
    with console.status(f"Distilling {len(changed)} documents ({', '.join(ALL_LAYERS)})..."):
        result = service.distill(layers=ALL_LAYERS, document_ids=changed)
    console.print(f"Distilled layer built for {len(changed)} documents in {result.seconds:.1f} s:", highlight=False)
    for name, layer in result.layers.items():
        made = ", ".join(f"{n} {kind}" for kind, n in layer.created.items()) or "nothing new"
        failed = f", [red]{len(layer.failed)} chunks failed[/]" if layer.failed else ""
        console.print(f"  {name} ({layer.method or 'default'}, {layer.seconds:.1f} s): {made}{failed}",
                      highlight=False)
    return "built"


def _print_answer(console: Console, q: DemoQuestion, view: AskResponse) -> None:
    a = view.answer
    mode = " [yellow](offline)[/]" if a.offline else ""
    console.rule(f"{q.question_class} question")
    console.print(f"[bold]Q:[/] {escape(q.text)}", highlight=False)
    how = a.method + (f", {a.question_class}" if a.question_class else "")
    console.print(f"[bold]A[/] ({escape(how)}){mode}: {escape(a.answer)}", highlight=False)
    if a.offline and a.supporting_sentence and a.supporting_sentence not in a.answer:
        console.print(f"  offline extractive answer, taken from: \"{a.supporting_sentence}\"", highlight=False,
                      markup=False)
    for c in view.citations:
        start, end = c.highlight
        page = f", page {c.page}" if c.page else ""
        console.print(f"  [{c.marker}] {c.title}{page}, characters {c.char_start}-{c.char_end}: "
                      f"\"{_snippet(c.chunk_text[start:end])}\"", highlight=False, markup=False)
    if not view.citations:  # e.g. a creative question offline: the answer points to the evidence it found
        for n, hit in enumerate(a.evidence[:5], start=1):
            page = f", page {hit.page}" if hit.page else ""
            console.print(f"  evidence {n}: {hit.title}{page} (score {hit.score:.3f}): \"{_snippet(hit.text)}\"",
                          highlight=False, markup=False)
    if view.browser_link:
        console.print(f"  Evidence in the Neo4j Browser: {view.browser_link}", highlight=False, markup=False,
                      soft_wrap=True)


def _snippet(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat[:width] + ("..." if len(flat) > width else "")
