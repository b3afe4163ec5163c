from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kg.errors import LoaderError
from loaders import SourceDocument
from tests.loaders.conftest import write_docx, write_xlsx

Load = Callable[..., SourceDocument]


def test_markdown_headings_tables_links(tmp_path: Path, load_one: Load) -> None:
    path = tmp_path / "notes.md"
    path.write_text(
        "# Strata Notes\n\nIntro with a [link](https://example.org/a) here.\n\n"
        "Setext Part\n-----------\n\nUnder setext.\n\n### Deep\n\n"
        "| Name | Value |\n|---|---:|\n| a | 1 |\n| b \\| c | 2 |\n\n```\n# not a heading\n```\n",
        encoding="utf-8",
    )
    doc = load_one(path)
    assert doc.title == "Strata Notes"
    assert [(s.key, s.title, s.parent_key) for s in doc.sections[1:]] == [
        ("1", "Strata Notes", "0"),
        ("1.1", "Setext Part", "1"),
        ("1.1.1", "Deep", "1.1"),
    ]
    assert doc.block_text(doc.blocks[0]) == "Intro with a link here." and doc.blocks[0].section_key == "1"
    assert doc.links[0].target == "https://example.org/a" and doc.links[0].text == "link"
    [table] = doc.tables
    assert table.header == ["Name", "Value"] and table.rows == [["a", "1"], ["b | c", "2"]]
    assert table.section_key == "1.1.1"
    last = doc.block_text(doc.blocks[-1])
    assert last.startswith("```") and "# not a heading" in last


def test_html_structure_and_dropped_chrome(tmp_path: Path, load_one: Load) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        "<html><head><title>Page Title</title><style>p{}</style></head><body>"
        "<nav>menu</nav><header>site header</header><h1>Top</h1><p>First <b>para</b>.</p>"
        "<h2>Sub</h2><ul><li>item one</li><li>item <a href='https://x.org/y'>two</a></li></ul>"
        "<table><caption>Scores</caption><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>"
        "<script>var x = 1;</script><footer>copyright</footer><pre>code  keeps   spaces</pre></body></html>",
        encoding="utf-8",
    )
    doc = load_one(path)
    assert doc.title == "Page Title"
    assert [(s.key, s.title) for s in doc.sections[1:]] == [("1", "Top"), ("1.1", "Sub")]
    assert [doc.block_text(b) for b in doc.blocks] == ["First para.", "item one", "item two", "code  keeps   spaces"]
    assert doc.blocks[1].section_key == "1.1"
    for junk in ("menu", "site header", "var x", "copyright"):
        assert junk not in doc.text
    assert doc.tables[0].header == ["k", "v"] and doc.tables[0].rows == [["a", "1"]]
    assert doc.tables[0].caption == "Scores"
    assert doc.links[0].target == "https://x.org/y" and doc.links[0].text == "two"


def test_html_nested_5000_deep(tmp_path: Path, load_one: Load) -> None:
    path = tmp_path / "deep.html"
    path.write_text("<div>" * 5000 + "<p>deep text</p>" + "</div>" * 5000, encoding="utf-8")
    doc = load_one(path)
    assert [doc.block_text(b) for b in doc.blocks] == ["deep text"]


def test_docx(tmp_path: Path, load_one: Load) -> None:
    path = write_docx(tmp_path / "report.docx")
    doc = load_one(path)
    assert doc.title == "Report"
    assert [(s.key, s.title, s.level) for s in doc.sections[1:]] == [
        ("1", "Report", 1),
        ("1.1", "Details", 2),
    ]
    assert [(doc.block_text(b), b.section_key) for b in doc.blocks] == [
        ("Opening paragraph.", "1"),
        ("Detail text.", "1.1"),
        ("After the table.", "1.1"),
    ]
    assert doc.tables[0].header == ["h1", "h2"] and doc.tables[0].rows == [["x", "y"]]
    assert doc.blocks[1].char_end < doc.tables[0].char_start < doc.blocks[2].char_start


def test_csv_ragged_rows_are_recovered(tmp_path: Path, load_one: Load) -> None:
    path = tmp_path / "data.csv"
    path.write_text("name,age,city\nann,30\nbob,41,Oslo,extra\n", encoding="utf-8")
    doc = load_one(path)
    [table] = doc.tables
    assert table.header == ["name", "age", "city", "column_4"]
    assert table.rows == [["ann", "30", "", ""], ["bob", "41", "Oslo", "extra"]]
    assert doc.metadata["ragged_rows"] == "line 2: 2 of 3 cells; line 3: 4 of 3 cells"
    assert doc.block_text(doc.blocks[0]) == table.markdown


def test_tsv(tmp_path: Path, load_one: Load) -> None:
    path = tmp_path / "data.tsv"
    path.write_text("a\tb\n1\t2, with comma\n", encoding="utf-8")
    doc = load_one(path)
    assert doc.format == "tsv" and doc.tables[0].rows == [["1", "2, with comma"]]


def test_xlsx_two_sheets(tmp_path: Path, load_one: Load) -> None:
    path = write_xlsx(tmp_path / "book.xlsx")
    doc = load_one(path)
    assert [(s.key, s.title) for s in doc.sections[1:]] == [("1", "People"), ("2", "Cities")]
    assert [(t.section_key, t.header, t.rows) for t in doc.tables] == [
        ("1", ["name", "age"], [["ann", "30"]]),
        ("2", ["city"], [["Oslo"]]),
    ]
    assert len(doc.blocks) == 2


def test_text_paragraphs_utf16_bom(tmp_path: Path, load_one: Load) -> None:
    path = tmp_path / "u16.txt"
    path.write_bytes("First para\nsame para.\n\n\nSecond \u2013 naïve.\r\n".encode("utf-16"))
    doc = load_one(path)
    assert [doc.block_text(b) for b in doc.blocks] == ["First para\nsame para.", "Second \u2013 naïve."]
    assert doc.sections[0].title == "u16"


def test_text_gb18030_chinese(tmp_path: Path, load_one: Load) -> None:
    path = tmp_path / "zh.txt"
    text = "知识图谱是一种结构化的知识表示方法。\n\n检索增强生成结合了检索和生成。"
    path.write_bytes(text.encode("gb18030"))
    doc = load_one(path)
    assert [doc.block_text(b) for b in doc.blocks] == text.split("\n\n")
    assert doc.language == "zh"


def test_text_invalid_utf8_names_offset_and_line(tmp_path: Path, load_one: Load) -> None:
    path = tmp_path / "broken.txt"
    path.write_bytes("café ok\nline two\n".encode() + b"bad \xff byte\n")
    with pytest.raises(LoaderError) as info:
        load_one(path)
    assert info.value.location == "line 3"
    assert "byte 22" in info.value.reason and "broken.txt" in str(info.value)


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [("empty.txt", b"", "empty"), ("junk.txt", bytes(range(256)) * 20, "binary")],
)
def test_text_rejects_empty_and_binary(
    tmp_path: Path, load_one: Load, name: str, content: bytes, reason: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(LoaderError, match=reason) as info:
        load_one(path)
    assert name in str(info.value)


def test_text_streams_across_read_blocks(
    tmp_path: Path, load_one: Load, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paragraph breaks and CRLFs that straddle read-block boundaries are still found."""
    import loaders.text

    monkeypatch.setattr(loaders.text, "BLOCK_SIZE", 7)
    path = tmp_path / "small.txt"
    path.write_bytes(b"alpha beta\r\n\r\ngamma delta epsilon\r\n  \r\nzeta")
    doc = load_one(path)
    assert [doc.block_text(b) for b in doc.blocks] == ["alpha beta", "gamma delta epsilon", "zeta"]
