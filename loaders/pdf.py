# PyMuPDF ships no type annotations for most methods; its calls are checked at the boundary instead.
# mypy: disable-error-code="no-untyped-call"
"""PDF via PyMuPDF: text in reading order with pages, sections, tables, figures and links.

* Sections come from the outline (``get_toc``) when the PDF has one, since the author's outline beats
  any guess; otherwise from typography: lines clearly larger than the body size are headings (larger
  size = higher level), then short bold lines one level below.
* Tables found by ``page.find_tables()`` are converted through pandas and their text is removed from
  the body, so a table is indexed once, as a table.
* Images become figures; a nearby line starting "Figure N"/"Fig. N" is taken as the caption.
* Lines repeated in the top or bottom margin of most pages (running headers, footers, page numbers —
  compared with digits masked) are dropped: they carry no content and would appear in every chunk.
* A word hyphenated at a line end is joined ("knowl-" + "edge" -> "knowledge").
"""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pymupdf
import pymupdf.table

from kg.errors import LoaderError
from loaders.base import Loader, require_nonempty
from loaders.builder import TextBuilder, sha256_file
from loaders.models import SourceDocument

__all__ = ["PdfLoader"]

_MARGIN = 0.1  # share of the page height treated as header/footer zone
_HEADING_RATIO = 1.2  # a line this much larger than body text is a heading
_CAPTION = re.compile(r"^(?:figure|fig\.)\s*\d+", re.IGNORECASE)
_CAPTION_DISTANCE = 72.0  # points between an image and its caption (one inch)
_PAGE_NUMBER = re.compile(r"^\W*(?:page\s*)?#+(?:\s*(?:of|/)\s*#+)?\W*$", re.IGNORECASE)
_BOLD_FLAG = 16
# PyMuPDF >= 1.27 gates ruled tables through its layout model by default, which drops plain ruled grids
# it does not recognise; ruling lines are a reliable signal on their own, so the gate is switched off.
_FIND_TABLES_OPTIONS = (
    {"use_layout": False} if "use_layout" in inspect.signature(pymupdf.table.find_tables).parameters else {}
)


@dataclass
class _Line:
    text: str
    bbox: tuple[float, float, float, float]
    size: float
    bold: bool
    block: int
    heading_level: int | None = None


@dataclass
class _Insert:
    """A table or figure to place before the first line below its top edge."""

    y0: float
    table: tuple[list[str], list[list[str]]] | None = None
    caption: str = ""


@dataclass
class _Page:
    number: int
    height: float
    lines: list[_Line]
    inserts: list[_Insert] = field(default_factory=list)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _margin_key(text: str) -> str:
    return re.sub(r"\d+", "#", _norm(text))


def _inside(bbox: tuple[float, float, float, float], area: pymupdf.Rect) -> bool:
    cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
    return bool(area.x0 <= cx <= area.x1 and area.y0 <= cy <= area.y1)


def _join(previous: str, following: str) -> str:
    """Join two lines of one paragraph, undoing end-of-line hyphenation of a lower-case continuation."""
    if len(previous) > 1 and previous.endswith("-") and previous[-2].isalpha() and following[:1].islower():
        return previous[:-1] + following
    return f"{previous} {following}"


def _open(path: Path, password: str | None) -> pymupdf.Document:
    require_nonempty(path)
    try:
        document = pymupdf.open(path, filetype="pdf")
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise LoaderError(str(path), f"corrupt or unreadable PDF: {exc}") from exc
    if document.needs_pass:
        if not password:
            document.close()
            raise LoaderError(str(path), "encrypted PDF: set a password")
        if not document.authenticate(password):
            document.close()
            raise LoaderError(str(path), "encrypted PDF: the password is wrong")
    return document


def _read_page(page: pymupdf.Page, path: Path) -> _Page:
    number = page.number + 1 if page.number is not None else 0
    try:
        tables = list(page.find_tables(**_FIND_TABLES_OPTIONS).tables)
        images = page.get_image_info()
        content: dict[str, Any] = page.get_text("dict", sort=True)
    except (RuntimeError, ValueError) as exc:
        raise LoaderError(str(path), f"cannot extract page content: {exc}", f"page {number}") from exc
    result = _Page(number=number, height=float(page.rect.height), lines=[])
    for table in tables:
        frame = _table_frame(page, table)
        header = [str(c) for c in frame.columns]
        rows = [[str(v) for v in row] for row in frame.itertuples(index=False)]
        result.inserts.append(_Insert(y0=float(table.bbox[1]), table=(header, rows)))
    areas = [pymupdf.Rect(t.bbox) for t in tables]
    for number_in_page, block in enumerate(content["blocks"]):
        for line in block.get("lines", []):
            spans = [s for s in line["spans"] if s["text"].strip()]
            text = " ".join("".join(s["text"] for s in spans).split())
            bbox = tuple(line["bbox"])
            if not text or any(_inside(bbox, a) for a in areas):
                continue
            size = max(s["size"] for s in spans)
            bold = all(s["flags"] & _BOLD_FLAG or "bold" in s["font"].lower() for s in spans)
            result.lines.append(_Line(text, bbox, float(size), bold, number_in_page))
    _attach_figures(result, images)
    return result


def _table_frame(page: pymupdf.Page, table: Any) -> pd.DataFrame:
    """The table as a DataFrame. Cell text is read from each cell's rectangle because the finder's own
    extraction splits some glyphs onto separate lines (the "." of "0.81" came out as "0 81\\n.")."""
    cells = [[" ".join(page.get_textbox(c).split()) if c else "" for c in row.cells] for row in table.rows]
    if table.header.external:
        header = [str(n or "") for n in table.header.names]
    else:
        header, cells = (cells[0], cells[1:]) if cells else ([], [])
    return pd.DataFrame(cells, columns=pd.Index(header) if cells or header else None)


def _attach_figures(page: _Page, images: list[dict[str, Any]]) -> None:
    """Each image takes the nearest unused "Figure N" line below (or else above) it as its caption;
    the caption's block continues the caption and leaves the body."""
    for image in images:
        _, y0, _, y1 = image["bbox"]
        best: tuple[float, _Line] | None = None
        for line in page.lines:
            if not _CAPTION.match(line.text):
                continue
            below, above = line.bbox[1] - y1, y0 - line.bbox[3]
            distance = below if below >= -2 else above
            if -2 <= distance <= _CAPTION_DISTANCE and (best is None or distance < best[0]):
                best = (distance, line)
        caption = ""
        if best is not None:
            start = page.lines.index(best[1])
            taken = [best[1]]
            taken += [ln for ln in page.lines[start + 1 :] if ln.block == best[1].block]
            caption = " ".join(ln.text for ln in taken)
            page.lines = [ln for ln in page.lines if not any(ln is t for t in taken)]
        page.inserts.append(_Insert(y0=float(y0), caption=caption))


def _drop_margins(pages: list[_Page]) -> None:
    """Remove running headers/footers: margin lines whose digit-masked text recurs on half the pages."""

    def in_margin(page: _Page, line: _Line) -> bool:
        return line.bbox[3] <= page.height * _MARGIN or line.bbox[1] >= page.height * (1 - _MARGIN)

    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({_margin_key(ln.text) for ln in page.lines if in_margin(page, ln)})
    threshold = max(2, len(pages) / 2)

    def _repeated_or_number(key: str) -> bool:
        return counts[key] >= threshold or bool(_PAGE_NUMBER.match(key))

    for page in pages:
        page.lines = [
            ln for ln in page.lines if not (in_margin(page, ln) and _repeated_or_number(_margin_key(ln.text)))
        ]


def _headings_from_toc(pages: list[_Page], toc: list[list[Any]]) -> dict[int, list[tuple[int, str]]]:
    """Mark the lines the outline points at; outline entries without a matching line are returned per
    page so they can open their section at the top of that page."""
    unmatched: dict[int, list[tuple[int, str]]] = {}
    by_number = {p.number: p for p in pages}
    for level, title, page_number, *_ in toc:
        page = by_number.get(int(page_number))
        target = _norm(str(title))
        if page is None:
            continue
        line = next((ln for ln in page.lines if ln.heading_level is None and _norm(ln.text) == target), None)
        if line is not None:
            line.heading_level = int(level)
        else:
            unmatched.setdefault(page.number, []).append((int(level), str(title)))
    return unmatched


def _headings_from_fonts(pages: list[_Page]) -> None:
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[round(line.size, 1)] += len(line.text)
    if not sizes:
        return
    body = sizes.most_common(1)[0][0]

    def short(line: _Line) -> bool:
        text = line.text
        return len(text) <= 100 and any(c.isalpha() for c in text) and not text.endswith((".", ":", ","))

    large = sorted(
        {
            round(ln.size, 1)
            for p in pages
            for ln in p.lines
            if ln.size >= body * _HEADING_RATIO and short(ln)
        },
        reverse=True,
    )
    levels = {size: min(6, rank + 1) for rank, size in enumerate(large)}
    bold_level = min(6, len(large) + 1)
    for page in pages:
        block_sizes = Counter(ln.block for ln in page.lines)
        for line in page.lines:
            if not short(line):
                continue
            if round(line.size, 1) in levels:
                line.heading_level = levels[round(line.size, 1)]
            elif line.bold and block_sizes[line.block] == 1 and len(line.text) <= 80:
                line.heading_level = bold_level


class PdfLoader(Loader):
    formats: ClassVar[tuple[str, ...]] = ("pdf",)
    extensions: ClassVar[tuple[str, ...]] = (".pdf",)

    def sniff(self, head: bytes) -> bool:
        return head.lstrip()[:5] == b"%PDF-"

    def load(self, path: Path, *, password: str | None = None) -> Iterator[SourceDocument]:
        document = _open(path, password)
        with document:
            pages = [_read_page(document[i], path) for i in range(document.page_count)]
            toc = document.get_toc(simple=True)
            builder = TextBuilder(str((document.metadata or {}).get("title") or ""))
            for index in range(document.page_count):
                page, number = document[index], index + 1
                for link in page.get_links():
                    target = link.get("uri") or link.get("file") or ""
                    builder.add_link(str(target), page.get_textbox(link["from"]), number)
            info = document.metadata or {}
            metadata = {k: str(info[k]) for k in ("author", "subject", "creator") if info.get(k)}
        _drop_margins(pages)
        unmatched = _headings_from_toc(pages, toc) if toc else {}
        if not toc:
            _headings_from_fonts(pages)
        for extracted in pages:
            for level, title in unmatched.get(extracted.number, []):
                builder.heading(title, level, extracted.number)
            self._emit_page(builder, extracted)
        if not builder.title:
            builder.title = builder.sections[1].title if len(builder.sections) > 1 else path.stem
        yield builder.finish(
            source=str(path), format="pdf", sha256=sha256_file(path), pages=len(pages), metadata=metadata
        )

    @staticmethod
    def _emit_page(builder: TextBuilder, page: _Page) -> None:
        inserts = sorted(page.inserts, key=lambda i: i.y0)
        paragraph = ""
        block = -1

        def flush() -> None:
            nonlocal paragraph
            builder.add_block(paragraph, page.number)
            paragraph = ""

        def place(item: _Insert) -> None:
            flush()
            if item.table is not None:
                builder.add_table(*item.table, page=page.number)
            else:
                builder.add_figure(item.caption, page.number)

        for line in page.lines:
            while inserts and inserts[0].y0 <= line.bbox[1]:
                place(inserts.pop(0))
            if line.heading_level is not None:
                flush()
                builder.heading(line.text, line.heading_level, page.number)
                block = -1
                continue
            if line.block != block:
                flush()
                block = line.block
            paragraph = _join(paragraph, line.text) if paragraph else line.text
        for item in inserts:
            place(item)
        flush()
