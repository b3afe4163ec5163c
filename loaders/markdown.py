"""Markdown: ATX and setext headings become sections, pipe tables become tables, inline links become
links (their text stays in the block, the URL does not, so retrieval sees prose, not markup).

A small line-based parser rather than a full CommonMark implementation: it covers what carries
structure for retrieval (headings, paragraphs, lists, fenced code, pipe tables, links, images) and
treats everything else as paragraph text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from loaders.base import Loader
from loaders.builder import TextBuilder, sha256_file
from loaders.models import SourceDocument
from loaders.text import read_text

__all__ = ["MarkdownLoader"]

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TABLE_RULE = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _split_row(line: str) -> list[str]:
    """Split a pipe-table row on unescaped pipes."""
    body = line.strip()
    body = body.removeprefix("|")
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", body)]


class MarkdownLoader(Loader):
    formats: ClassVar[tuple[str, ...]] = ("markdown",)
    extensions: ClassVar[tuple[str, ...]] = (".md", ".markdown", ".mdown")

    def sniff(self, head: bytes) -> bool:
        text = head.decode("utf-8", errors="ignore")
        return bool(re.search(r"^#{1,6} \S", text, re.MULTILINE)) and "<html" not in text.lower()

    def load(self, path: Path, *, password: str | None = None) -> Iterator[SourceDocument]:
        lines = read_text(path).split("\n")
        builder = TextBuilder(path.stem)
        titled = False
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                self._add_text(builder, "\n".join(paragraph))
                paragraph.clear()

        i = 0
        while i < len(lines):
            line = lines[i]
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            atx = _ATX.match(line)
            fence = _FENCE.match(line)
            if atx or (
                paragraph == [] and line.strip() and _SETEXT.match(nxt) and not _LIST_ITEM.match(line)
            ):
                flush()
                if atx:
                    level, title = len(atx.group(1)), atx.group(2) or ""
                else:
                    level, title = (1 if nxt.strip().startswith("=") else 2), line.strip()
                    i += 1
                title = _LINK.sub(r"\1", title).strip()
                if level == 1 and not titled:
                    builder.title, titled = title, True
                builder.heading(title, level)
            elif fence:
                flush()
                marker = fence.group(1)
                code = [line]
                i += 1
                while i < len(lines) and not lines[i].lstrip().startswith(marker):
                    code.append(lines[i])
                    i += 1
                code.append(lines[i] if i < len(lines) else marker)
                builder.add_block("\n".join(code))
            elif "|" in line and _TABLE_RULE.match(nxt) and "-" in nxt:
                flush()
                header = _split_row(line)
                i += 2
                rows: list[list[str]] = []
                while i < len(lines) and "|" in lines[i] and lines[i].strip():
                    rows.append([_LINK.sub(r"\1", c) for c in _split_row(lines[i])])
                    i += 1
                builder.add_table(header, rows)
                continue
            elif not line.strip():
                flush()
            elif _LIST_ITEM.match(line):
                flush()
                paragraph.append(line)
            else:
                paragraph.append(line)
            i += 1
        flush()
        yield builder.finish(source=str(path), format="markdown", sha256=sha256_file(path))

    @staticmethod
    def _add_text(builder: TextBuilder, text: str) -> None:
        """Images become figures (alt text as caption); links are recorded and reduced to their text."""
        for image in _IMAGE.finditer(text):
            builder.add_figure(image.group(1))
        text = _IMAGE.sub("", text)
        for link in _LINK.finditer(text):
            builder.add_link(link.group(2), link.group(1))
        builder.add_block(_LINK.sub(r"\1", text))
