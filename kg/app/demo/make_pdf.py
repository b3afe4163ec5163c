# PyMuPDF ships no type annotations for most methods.
# mypy: disable-error-code="no-untyped-call"
"""Write ``corpus/failure-report-2024.pdf``, the demo's PDF with a ruled table. Run once; the PDF is committed.

    python -m kg.app.demo.make_pdf

It is generated rather than drawn by hand so its content can be read and changed here, next to the
other demo documents; the committed file keeps ``strata demo`` free of a PDF-writing step.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf

__all__ = ["FAILURES_2024", "write_failure_report"]

HEADER = ["site", "gearbox", "main bearing", "blade erosion", "pitch system", "generator"]
FAILURES_2024 = [
    ["Kestrel Ridge", "5", "2", "9", "4", "1"],
    ["Gannet Bank", "2", "1", "3", "1", "2"],
    ["Heron Moor", "4", "3", "2", "0", "2"],
    ["Osprey Flats", "2", "0", "1", "1", "0"],
]


def write_failure_report(path: Path) -> Path:
    doc = pymupdf.open()
    body = 11
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 90), "Component failure report 2024", fontsize=20, fontname="hebo")
    lines = [
        "This report counts the component failures of the Borealis Wind fleet in 2024, per site, as",
        "recorded by the site managers named in fleet-overview.md. A failure is any fault that stopped a",
        "turbine until a component was repaired or exchanged.",
    ]
    for n, line in enumerate(lines):
        page.insert_text((72, 125 + 14 * n), line, fontsize=body)
    page.insert_text((72, 190), "Failures per site", fontsize=15, fontname="hebo")
    widths = [110, 62, 80, 80, 76, 62]
    y0, h = 205, 20
    for r, row in enumerate([HEADER, *FAILURES_2024]):
        x = 60.0
        for c, value in enumerate(row):
            rect = pymupdf.Rect(x, y0 + r * h, x + widths[c], y0 + (r + 1) * h)
            page.draw_rect(rect, color=(0, 0, 0), width=1)
            page.insert_text((rect.x0 + 4, rect.y1 - 6), value, fontsize=10)
            x += widths[c]
    notes = [
        "Gearbox failures are counted when the gearbox had to be exchanged; the fleet-wide series since",
        "2015 is in gearbox-history.md. Blade erosion counts blades with leading-edge damage found by the",
        "drone inspections. Pitch-system failures at Kestrel Ridge were all emergency-battery faults, the",
        "same fault that stopped turbine KR-17 during storm Edda.",
    ]
    for n, line in enumerate(notes):
        page.insert_text((72, 330 + 14 * n), line, fontsize=body)
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 90), "Recommendations", fontsize=15, fontname="hebo")
    recs = [
        "Kestrel Ridge needs the most attention: it had the most gearbox, blade and pitch failures.",
        "Replace the pitch emergency batteries of all Aurora A3.6 turbines before the winter of 2025.",
        "Heron Moor's Aurora A2.3 gearboxes should be planned for exchange as they near their 20-year life.",
    ]
    for n, line in enumerate(recs):
        page.insert_text((72, 120 + 14 * n), line, fontsize=body)
    doc.set_toc([[1, "Component failure report 2024", 1], [2, "Failures per site", 1], [2, "Recommendations", 2]])
    doc.set_metadata({"title": "Component failure report 2024", "author": "Borealis Wind"})
    doc.save(path, garbage=4, deflate=True)
    return path


if __name__ == "__main__":
    print(write_failure_report(Path(__file__).with_name("corpus") / "failure-report-2024.pdf"))
