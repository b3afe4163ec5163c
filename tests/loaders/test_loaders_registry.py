from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kg.errors import LoaderError
from loaders import discover, load_path, loader_for
from tests.loaders.conftest import corrupt_pdf, truncate_zip_member, write_docx, write_pdf, write_xlsx


def _tree(root: Path) -> None:
    (root / "docs" / "sub").mkdir(parents=True)
    (root / "docs" / "b.md").write_text("# B\n\nb", encoding="utf-8")
    (root / "docs" / "sub" / "a.txt").write_text("a", encoding="utf-8")
    (root / "docs" / "sub" / "skip.md").write_text("skip", encoding="utf-8")
    (root / "docs" / "image.bin").write_bytes(b"\x00\x01")
    (root / "docs" / ".hidden.md").write_text("h", encoding="utf-8")


def test_discover_recursive_sorted_with_globs(tmp_path: Path) -> None:
    _tree(tmp_path)
    root = tmp_path / "docs"
    assert [p.relative_to(root).as_posix() for p in discover([root])] == ["b.md", "sub/a.txt", "sub/skip.md"]
    found = discover([root], include=["*.md", "*.txt"], exclude=["sub/skip.md"])
    assert [p.name for p in found] == ["b.md", "a.txt"]


def test_discover_never_follows_symlinks_out_of_root(tmp_path: Path) -> None:
    _tree(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret", encoding="utf-8")
    root = tmp_path / "docs"
    os.symlink(outside / "secret.md", root / "link.md")
    os.symlink(outside, root / "linked_dir")
    os.symlink(root / "b.md", root / "inside.md")
    names = [p.name for p in discover([root])]
    assert "link.md" not in names and "secret.md" not in names
    assert "inside.md" in names


def test_content_sniffing_and_unknown_format(tmp_path: Path) -> None:
    html = tmp_path / "page.unknown"
    html.write_text("<!DOCTYPE html><html><body><p>hi</p></body></html>", encoding="utf-8")
    assert loader_for(html).formats == ("html",)
    [doc] = list(load_path(html))
    assert doc.format == "html" and doc.text == "hi"
    junk = tmp_path / "blob.xyz"
    junk.write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(LoaderError, match="unknown format") as info:
        loader_for(junk)
    assert "blob.xyz" in str(info.value)


def test_load_path_on_folder_and_missing(tmp_path: Path) -> None:
    _tree(tmp_path)
    docs = list(load_path(tmp_path / "docs"))
    assert [d.format for d in docs] == ["markdown", "text", "markdown"]
    with pytest.raises(LoaderError, match="no such file"):
        list(load_path(tmp_path / "missing.txt"))


@pytest.mark.parametrize(
    ("name", "make", "raised"),
    [
        ("cut.docx", lambda p: truncate_zip_member(write_docx(p.with_name("ok.docx")), p, "word/document.xml"),
         "XMLSyntaxError"),
        ("cut.xlsx", lambda p: truncate_zip_member(write_xlsx(p.with_name("ok.xlsx")), p,
                                                   "xl/worksheets/sheet1.xml"), "ParseError"),
        ("repaired.pdf", lambda p: corrupt_pdf(write_pdf(p.with_name("ok.pdf")), p), "IndexError"),
    ],
)
def test_any_parser_error_becomes_a_loader_error_naming_the_file(
    tmp_path: Path, name: str, make: Callable[[Path], Path], raised: str
) -> None:
    """Parsers raise their own errors on damaged files; the loader boundary turns each into one line."""
    path = make(tmp_path / name)
    with pytest.raises(LoaderError) as info:
        list(load_path(path))
    assert info.value.path == str(path)
    assert raised in info.value.reason and "\n" not in str(info.value)
    assert info.value.__cause__ is not None and type(info.value.__cause__).__name__ == raised
