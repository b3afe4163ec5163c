from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kg.errors import LoaderError
from loaders import SourceDocument

Load = Callable[..., SourceDocument]


@pytest.mark.parametrize("toc", [True, False], ids=["outline", "fonts"])
def test_pdf_structure(tmp_path: Path, toc: bool, load_one: Load, make_pdf: Callable[..., Path]) -> None:
    doc = load_one(make_pdf(tmp_path / "r.pdf", toc=toc))
    assert (doc.format, doc.title, doc.pages) == ("pdf", "Strata Report", 3)
    sections = {s.title: s for s in doc.sections}
    assert sections["Background"].parent_key == sections["Introduction"].key == "1"
    assert (sections["Background"].key, sections["Results"].key, sections["Figures"].page) == ("1.1", "2", 3)
    by_text = {doc.block_text(b): b for b in doc.blocks}
    knowledge = by_text["Graphs store knowledge about entities and their relations."]
    assert (knowledge.page, knowledge.section_key) == (1, "1")
    assert by_text["Scores are exact-match accuracy."].page == 2


def test_pdf_drops_running_header_footer(pdf_path: Path, load_one: Load) -> None:
    doc = load_one(pdf_path)
    assert "Strata Technical Report" not in doc.text
    assert "Page 2" not in doc.text


def test_pdf_table_is_extracted_and_not_repeated_in_body(pdf_path: Path, load_one: Load) -> None:
    doc = load_one(pdf_path)
    [table] = doc.tables
    assert (table.header, table.rows, table.page, table.section_key) == (
        ["Method", "Score"],
        [["PIKE", "0.81"], ["KG2RAG", "0.77"]],
        2,
        "2",
    )
    assert doc.text[table.char_start : table.char_end] == table.markdown
    assert table.csv.splitlines()[1] == "PIKE,0.81"
    assert not any("KG2RAG" in doc.block_text(b) for b in doc.blocks)
    # the table sits between the two paragraphs of its page
    before, after = (b for b in doc.blocks if b.page == 2)
    assert before.char_end < table.char_start < table.char_end < after.char_start


def test_pdf_figure_caption_and_link(pdf_path: Path, load_one: Load) -> None:
    doc = load_one(pdf_path)
    [figure] = doc.figures
    assert (figure.caption, figure.page, figure.section_key) == (
        "Figure 1: The graph schema of Strata.",
        3,
        "3",
    )
    assert doc.text[figure.char_start : figure.char_end] == figure.caption
    assert not any(doc.block_text(b).startswith("Figure 1") for b in doc.blocks)
    [link] = doc.links
    assert (link.target, link.page) == ("https://example.org/strata", 1)
    assert "project site" in link.text


def test_pdf_encrypted(tmp_path: Path, load_one: Load, make_pdf: Callable[..., Path]) -> None:
    path = make_pdf(tmp_path / "secret.pdf", encrypt_password="s3cret")
    with pytest.raises(LoaderError, match="encrypted PDF: set a password") as info:
        load_one(path)
    assert "secret.pdf" in str(info.value)
    with pytest.raises(LoaderError, match="password is wrong"):
        load_one(path, password="nope")
    assert load_one(path, password="s3cret").tables[0].rows[0] == ["PIKE", "0.81"]


@pytest.mark.parametrize(
    ("content", "message"), [(b"", "empty"), (b"%PDF-1.7\n garbage \x00\x01 not a pdf", "corrupt")]
)
def test_pdf_broken(tmp_path: Path, content: bytes, message: str, load_one: Load) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(content)
    with pytest.raises(LoaderError, match=message) as info:
        load_one(path)
    assert str(path) in str(info.value)
