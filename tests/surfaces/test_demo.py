"""The demo through the real (offline) client: the corpus loads whole with its cross-references, every layer
is built, and the demo prints cited answers and how long it took."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import PurePath

from rich.console import Console

from kg.app.client import Strata
from kg.app.demo import CORPUS, QUESTIONS, run_demo
from kg.app.rest import StrataService
from kg.store.base import GraphStore

# Who links to or names whom, as written in the corpus.
REFERENCES = {
    ("fleet-overview.md", "maintenance-policy.html"), ("fleet-overview.md", "gearbox-history.md"),
    ("fleet-overview.md", "failure-report-2024.pdf"),
    ("maintenance-policy.html", "fleet-overview.md"), ("maintenance-policy.html", "storm-incident-2023.html"),
    ("maintenance-policy.html", "gearbox-history.md"),
    ("storm-incident-2023.html", "maintenance-policy.html"), ("storm-incident-2023.html", "failure-report-2024.pdf"),
    ("gearbox-history.md", "failure-report-2024.pdf"), ("gearbox-history.md", "maintenance-policy.html"),
    ("failure-report-2024.pdf", "fleet-overview.md"), ("failure-report-2024.pdf", "gearbox-history.md"),
}


def test_demo_corpus_loads_with_cross_references_and_answers(make_kb: Callable[[str], Strata],
                                                             store: GraphStore) -> None:
    service = StrataService(make_kb("default"))
    out = io.StringIO()
    report = run_demo(service, offline=True, console=Console(file=out, width=200))
    text = out.getvalue()

    assert sorted(PurePath(f.path).name for f in report.load.files) == sorted(p.name for p in CORPUS.iterdir())
    assert {f.status for f in report.load.files} == {"loaded"}, report.load.to_json()
    assert len(report.load.files) >= 4
    formats = {r["format"] for r in store.query("MATCH (d:Document) RETURN d.format AS format")}
    assert {"pdf", "markdown", "html"} <= formats
    edges = store.query("MATCH (a:Document)-[:REFERENCES]->(b:Document) RETURN a.source AS a, b.source AS b")
    assert {(PurePath(e["a"]).name, PurePath(e["b"]).name) for e in edges} == REFERENCES
    # The quantitative question's table is a table, with its rows, on page 1 of the PDF.
    [table] = store.query("MATCH (t:Table) WHERE t.markdown CONTAINS 'blade erosion' RETURN t.markdown AS md")
    assert "Kestrel Ridge" in table["md"] and "Osprey Flats" in table["md"]

    assert "Running OFFLINE" in text
    # Every distilled layer is built, offline methods standing in for the LLM.
    layers = {"atoms": "Atom", "triples": "Fact", "tables": "Row", "tags": "Tag", "pseudograph": "Topic"}
    nodes = service.stats().nodes
    counts = {layer: nodes[label] for layer, label in layers.items()}
    assert all(counts.values()), counts
    assert all(f"  {layer} (" in text for layer in layers), text
    assert re.search(r"Done in \d+\.\d s", text) and report.seconds > 0
    assert [q.question_class for q in QUESTIONS] == ["factual", "bridging", "quantitative", "predictive", "creative"]
    assert len(report.answers) == len(QUESTIONS)
    # Every answer is cited, except a creative one offline, which shows the evidence it found instead.
    creative = [a for a in report.answers if a.answer.question_class == "creative"]
    assert all(a.citations for a in report.answers if a not in creative), text
    assert all(a.citations or a.answer.evidence for a in creative), text
    assert all(a.citations for a in creative) or "evidence 1: " in text, text
    first = report.answers[0].citations[0]
    assert f"[{first.marker}] {first.title}" in text and f"characters {first.char_start}-{first.char_end}" in text
    assert text.count("Evidence in the Neo4j Browser: http://127.0.0.1:") == len(QUESTIONS)

    # Re-running is a no-op for the corpus: every file unchanged, nothing to distil again.
    again = run_demo(service, offline=True, console=Console(file=io.StringIO()), questions=())
    assert {f.status for f in again.load.files} == {"unchanged"}
