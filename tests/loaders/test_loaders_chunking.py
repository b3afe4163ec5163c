# ruff: noqa: RUF001  (full-width Chinese punctuation is what these tests are about)
from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from loaders import SourceDocument, chunk_document, count_tokens, load_path, split_sentences

Load = Callable[..., SourceDocument]


def _text_doc(tmp_path: Path, load_one: Load, content: str, name: str = "doc.md") -> SourceDocument:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return load_one(path)


def test_split_sentences_english_and_chinese() -> None:
    text = "Dr. Smith arrived. He said “hi!” Then left?  知识图谱很好。检索也好！对吗？"
    pieces = [text[a:b] for a, b in split_sentences(text)]
    assert pieces == [
        "Dr. Smith arrived.",
        "He said “hi!”",
        "Then left?",
        "知识图谱很好。",
        "检索也好！",
        "对吗？",
    ]
    assert count_tokens("知识图谱 is good") == 6


def test_chunks_respect_budget_sentences_sections_and_offsets(tmp_path: Path, load_one: Load) -> None:
    sentences = [f"Sentence number {i} talks about topic {i} in detail." for i in range(40)]
    doc = _text_doc(tmp_path, load_one, "# A\n\n" + " ".join(sentences) + "\n\n# B\n\nShort one.\n")
    chunks = chunk_document(doc, "doc1", max_tokens=40, overlap=10)
    text_chunks = [c for c in chunks if c.kind == "text"]
    assert [c.order for c in chunks] == list(range(len(chunks)))
    for chunk in text_chunks:
        assert doc.text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.tokens <= 40
        assert chunk.text.endswith(".") and chunk.text[0] == "S"  # whole sentences only
        assert chunk.id == f"doc1:c{hashlib.sha1(chunk.text.encode()).hexdigest()[:12]}"
    assert {c.section_key for c in text_chunks} == {"1", "2"}
    assert text_chunks[-1].text == "Short one." and text_chunks[-1].section_key == "2"
    section_a = [c for c in text_chunks if c.section_key == "1"]
    # consecutive chunks overlap by whole sentences, and together they cover every sentence
    assert all(b.char_start < a.char_end for a, b in itertools.pairwise(section_a))
    covered = " ".join(c.text for c in section_a)
    assert all(s in covered for s in sentences)
    assert chunk_document(doc, "doc1", max_tokens=40, overlap=10) == chunks


def test_overlong_sentence_is_split_at_budget(tmp_path: Path, load_one: Load) -> None:
    doc = _text_doc(tmp_path, load_one, " ".join(f"w{i}" for i in range(100)), "long.txt")
    chunks = chunk_document(doc, "d", max_tokens=30, overlap=5)
    assert [c.tokens for c in chunks] == [30, 30, 30, 10]
    assert all(doc.text[c.char_start : c.char_end] == c.text for c in chunks)


def test_chinese_chunking(tmp_path: Path, load_one: Load) -> None:
    doc = _text_doc(tmp_path, load_one, "知识图谱是一种结构。" * 12, "zh.txt")
    chunks = chunk_document(doc, "zh", max_tokens=25, overlap=0)
    assert all(c.text.endswith("。") and c.tokens <= 25 for c in chunks)
    assert "".join(c.text for c in chunks) == doc.text


def test_table_and_figure_chunks(pdf_path: Path) -> None:
    [doc] = list(load_path(pdf_path))
    chunks = chunk_document(doc, "pdf")
    table = next(c for c in chunks if c.kind == "table")
    figure = next(c for c in chunks if c.kind == "figure")
    assert table.ref_key == doc.tables[0].key and "| PIKE | 0.81 |" in table.text and table.page == 2
    assert figure.text == "Figure 1: The graph schema of Strata." and figure.ref_key == "f1"
    starts = [c.char_start for c in chunks]
    assert starts == sorted(starts)
    # text chunks never swallow the table sitting between two paragraphs
    assert not any(c.kind == "text" and "KG2RAG" in c.text for c in chunks)


def test_invalid_budget() -> None:
    doc = SourceDocument(source="x", title="x", format="text", sha256="0", text="", sections=[], blocks=[])
    with pytest.raises(ValueError, match="max_tokens"):
        chunk_document(doc, "x", max_tokens=0)


def test_a_chunk_id_follows_its_text_not_its_position(tmp_path: Path, load_one: Load) -> None:
    """So an unchanged chunk of an edited document keeps its id (and what was distilled from it); a repeated
    text gets an id of its own."""
    paragraphs = [f"Paragraph {i} says something about subject {i}." for i in range(6)]
    before = chunk_document(_text_doc(tmp_path, load_one, "\n\n".join(paragraphs) + "\n"), "doc1", max_tokens=12,
                            overlap=0)
    edited = ["An opening paragraph added to the second edition.", *paragraphs, paragraphs[2]]
    after = chunk_document(_text_doc(tmp_path, load_one, "\n\n".join(edited) + "\n"), "doc1", max_tokens=12,
                           overlap=0)
    by_text = {c.text: c.id for c in before}
    assert len(before) == 6 and len(after) == 8
    assert [c.id for c in after[1:7]] == [by_text[c.text] for c in after[1:7]]
    assert after[7].text == after[3].text and after[7].id == after[3].id + "-1"
    assert len({c.id for c in after}) == 8


def test_an_edit_changes_only_the_chunks_around_it(tmp_path: Path, load_one: Load) -> None:
    """Chunk boundaries fall back into step after an inserted paragraph (a paragraph that does not fit what is
    left of a chunk starts the next one), so a replaced document keeps the distillation of most chunks."""
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]
    paragraphs = [" ".join(f"{words[(i + j) % 12]}{i}." if j % 6 == 5 else words[(i * j) % 12]
                           for j in range(6 + (i * 7) % 23)) for i in range(80)]
    before = chunk_document(_text_doc(tmp_path, load_one, "\n\n".join(paragraphs) + "\n"), "doc1",
                            max_tokens=64, overlap=8)
    edited = [*paragraphs[:10], "An inserted paragraph of a few words.", *paragraphs[10:]]
    after = chunk_document(_text_doc(tmp_path, load_one, "\n\n".join(edited) + "\n"), "doc1",
                           max_tokens=64, overlap=8)
    new = [c.order for c in after if c.id not in {b.id for b in before}]
    assert len(before) > 20 and 1 <= len(new) <= 3, new
