"""The demo corpus loads whole, its documents reference each other, and the demo prints cited answers."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import PurePath

from rich.console import Console

from kg.client import Strata
from kg.demo import CORPUS, QUESTIONS, run_demo
from kg.graph.store import GraphStore
from tests.surfaces.fulltext import FullTextService

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
    service = FullTextService(make_kb("default"))
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
    assert [q.question_class for q in QUESTIONS] == ["factual", "bridging", "quantitative", "predictive", "creative"]
    assert len(report.answers) == len(QUESTIONS) and report.unavailable == []
    assert all(a.citations for a in report.answers)
    first = report.answers[0].citations[0]
    assert f"[1] {first.title}" in text and f"characters {first.char_start}-{first.char_end}" in text
    assert text.count("Evidence in the Neo4j Browser: http://127.0.0.1:") == len(QUESTIONS)

    # Re-running is a no-op for the corpus: every file unchanged, nothing to distil again.
    again = run_demo(service, offline=True, console=Console(file=io.StringIO()), questions=())
    assert {f.status for f in again.load.files} == {"unchanged"}
