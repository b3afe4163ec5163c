"""Fixtures that build small input files of every format, and an invariant check shared by the tests."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

import docx
import openpyxl
import pymupdf
import pytest

from loaders import SourceDocument, load_path

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def assert_invariants(doc: SourceDocument) -> None:
    """The contract every loader must keep: offsets point at the text, sections form a keyed tree."""
    keys = {s.key for s in doc.sections}
    root = doc.sections[0]
    assert (root.key, root.level, root.parent_key, root.title) == ("0", 0, None, doc.title)
    for section in doc.sections[1:]:
        assert section.parent_key in keys
        assert section.key.startswith("" if section.parent_key == "0" else f"{section.parent_key}.")
    for block in doc.blocks:
        text = doc.block_text(block)
        assert text and text == text.strip()  # a block is a span of the text, never blank
        assert block.section_key in keys
    for item in [*doc.tables, *doc.figures]:
        assert item.section_key in keys
    for sentence in doc.sentences:
        assert 0 <= sentence.char_start <= sentence.char_end <= len(doc.text)


def _png() -> bytes:
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 30), False)
    pix.set_rect(pix.irect, (200, 30, 30))
    return bytes(pix.tobytes("png"))


def write_pdf(path: Path, *, toc: bool = True, encrypt_password: str | None = None) -> Path:
    """Three pages: running header/footer, headings, a ruled table, an image with a caption, a link and a
    hyphenated line break."""
    doc = pymupdf.open()
    body = 11
    for number in range(1, 4):
        page = doc.new_page(width=595, height=842)
        page.insert_text((72, 40), "Strata Technical Report", fontsize=9)
        page.insert_text((280, 815), f"Page {number}", fontsize=9)
        if number == 1:
            page.insert_text((72, 100), "Introduction", fontsize=20, fontname="hebo")
            page.insert_text((72, 130), "Graphs store knowl-", fontsize=body)
            page.insert_text((72, 144), "edge about entities and their relations.", fontsize=body)
            page.insert_text((72, 180), "Background", fontsize=15, fontname="hebo")
            page.insert_text((72, 210), "Earlier systems used flat vector stores.", fontsize=body)
            page.insert_text((72, 240), "See the project site for details.", fontsize=body)
            link_rect = pymupdf.Rect(72, 230, 250, 244)
            page.insert_link(
                {"kind": pymupdf.LINK_URI, "from": link_rect, "uri": "https://example.org/strata"}
            )
        elif number == 2:
            page.insert_text((72, 100), "Results", fontsize=20, fontname="hebo")
            page.insert_text((72, 130), "The table below lists the scores.", fontsize=body)
            cells = [["Method", "Score"], ["PIKE", "0.81"], ["KG2RAG", "0.77"]]
            x0, y0, w, h = 72, 160, 150, 20
            for r, row in enumerate(cells):
                for c, value in enumerate(row):
                    rect = pymupdf.Rect(x0 + c * w, y0 + r * h, x0 + (c + 1) * w, y0 + (r + 1) * h)
                    page.draw_rect(rect, color=(0, 0, 0), width=1)
                    page.insert_text((rect.x0 + 4, rect.y1 - 6), value, fontsize=body)
            page.insert_text((72, 260), "Scores are exact-match accuracy.", fontsize=body)
        else:
            page.insert_text((72, 100), "Figures", fontsize=20, fontname="hebo")
            page.insert_image(pymupdf.Rect(72, 120, 272, 270), stream=_png())
            page.insert_text((72, 290), "Figure 1: The graph schema of Strata.", fontsize=body)
            page.insert_text((72, 330), "The schema links chunks to sections.", fontsize=body)
    if toc:
        doc.set_toc([[1, "Introduction", 1], [2, "Background", 1], [1, "Results", 2], [1, "Figures", 3]])
    doc.set_metadata({"title": "Strata Report", "author": "Strata"})
    if encrypt_password:
        doc.save(
            path,
            encryption=pymupdf.PDF_ENCRYPT_AES_256,
            user_pw=encrypt_password,
            owner_pw=encrypt_password + "-owner",
        )
    else:
        doc.save(path)
    return path


def write_docx(path: Path) -> Path:
    """Heading 1 "Report", heading 2 "Details", a 2x2 table between two paragraphs."""
    document = docx.Document()
    document.add_heading("Report", level=1)
    document.add_paragraph("Opening paragraph.")
    document.add_heading("Details", level=2)
    document.add_paragraph("Detail text.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([["h1", "h2"], ["x", "y"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("After the table.")
    document.save(str(path))
    return path


def write_xlsx(path: Path) -> Path:
    """Two sheets: People (name, age: ann 30) and Cities (city: Oslo)."""
    workbook = openpyxl.Workbook()
    first = workbook.active
    assert first is not None
    first.title = "People"
    first.append(["name", "age"])
    first.append(["ann", 30])
    second = workbook.create_sheet("Cities")
    second.append(["city"])
    second.append(["Oslo"])
    workbook.save(path)
    return path


def truncate_zip_member(source: Path, target: Path, member: str) -> Path:
    """A copy of an Office file whose ``member`` XML is cut in half: a valid zip, a broken part."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            zout.writestr(item, data[: len(data) // 2] if item.filename == member else data)
    return target


def corrupt_pdf(source: Path, target: Path) -> Path:
    """A copy of a PDF whose first content stream claims the page tree's object number. MuPDF opens it,
    then repairs it on first use of that stream and loses the page tree while the pages are being read
    (an IndexError from PyMuPDF, not one of its documented open errors)."""
    with pymupdf.open(source) as doc:
        pages = doc.xref_get_key(doc.pdf_catalog(), "Pages")[1].split()[0]
        stream = doc[0].get_contents()[0]
    raw = source.read_bytes()
    header = f"\n{stream} 0 obj".encode()
    assert header in raw
    target.write_bytes(raw.replace(header, f"\n{pages} 0 obj".encode(), 1))
    return target


@pytest.fixture
def pdf_path(tmp_path: Path) -> Path:
    return write_pdf(tmp_path / "report.pdf")


@pytest.fixture
def make_pdf() -> Callable[..., Path]:
    return write_pdf


@pytest.fixture
def load_one() -> Callable[..., SourceDocument]:
    """Load a single-document file and check the contract invariants on it."""

    def load(path: Path, password: str | None = None) -> SourceDocument:
        docs = list(load_path(path, password=password))
        assert len(docs) == 1
        assert_invariants(docs[0])
        return docs[0]

    return load


@pytest.fixture
def check() -> Callable[[SourceDocument], None]:
    return assert_invariants


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        raise RuntimeError(f"the shared QA samples are missing: expected {SHARED_DATA}")
    return SHARED_DATA
