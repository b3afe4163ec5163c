"""HTML via the standard library's event-driven ``html.parser``.

No tree is built and nothing recurses, so a page nested thousands of elements deep costs no stack: the
parser's callbacks only keep a flat list of open skip-elements, the current text run, and the tables
being filled. Page chrome (script, style, nav, header, footer, aside, noscript) is dropped because it
repeats across pages and pollutes retrieval.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

from loaders.base import Loader
from loaders.builder import TextBuilder, sha256_file
from loaders.models import SourceDocument
from loaders.text import read_text

__all__ = ["HtmlLoader"]

_DROP = frozenset({"script", "style", "nav", "header", "footer", "aside", "noscript", "template"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
# Elements whose boundaries end a run of text (so their contents become separate blocks).
_BREAKS = frozenset(
    {
        "p",
        "li",
        "pre",
        "div",
        "section",
        "article",
        "main",
        "blockquote",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "br",
        "hr",
        "figure",
        "figcaption",
        "body",
        "form",
        "fieldset",
        "address",
        "details",
        "summary",
    }
)
_WS = re.compile(r"\s+")


@dataclass
class _TableState:
    rows: list[list[str]] = field(default_factory=list)
    header_rows: int = 0
    cell: list[str] | None = None
    caption: list[str] = field(default_factory=list)
    in_caption: bool = False


class _Extractor(HTMLParser):
    def __init__(self, builder: TextBuilder) -> None:
        super().__init__(convert_charrefs=True)
        self.builder = builder
        self.skip_depth = 0
        self.pre_depth = 0
        self.run: list[str] = []
        self.heading: tuple[int, list[str]] | None = None
        self.tables: list[_TableState] = []
        self.link: tuple[str, list[str]] | None = None
        self.in_title = False
        self.title: list[str] = []
        self.first_h1: str | None = None

    def _flush(self) -> None:
        text = "".join(self.run)
        self.run.clear()
        if not self.pre_depth:
            text = _WS.sub(" ", text)
        self.builder.add_block(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROP:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        table = self.tables[-1] if self.tables else None
        if tag == "title":
            self.in_title = True
        elif tag in _HEADINGS and table is None:
            self._flush()
            self.heading = (_HEADINGS[tag], [])
        elif tag == "table":
            self._flush()
            self.tables.append(_TableState())
        elif table is not None and tag == "tr":
            table.rows.append([])
        elif table is not None and tag in ("td", "th"):
            if not table.rows:
                table.rows.append([])
            if tag == "th" and len(table.rows) == table.header_rows + 1 and not table.rows[-1]:
                table.header_rows += 1
            table.cell = []
        elif table is not None and tag == "caption":
            table.in_caption = True
        elif tag == "a":
            href = dict(attrs).get("href")
            if href and not href.startswith(("#", "javascript:")):
                self.link = (href, [])
        elif tag == "pre":
            self._flush()
            self.pre_depth += 1
        elif tag in _BREAKS and table is None and self.heading is None:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROP:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        table = self.tables[-1] if self.tables else None
        if tag == "title":
            self.in_title = False
        elif tag in _HEADINGS and self.heading is not None:
            level, parts = self.heading
            self.heading = None
            title = _WS.sub(" ", "".join(parts)).strip()
            if title:
                if level == 1 and self.first_h1 is None:
                    self.first_h1 = title
                self.builder.heading(title, level)
        elif tag == "table" and table is not None:
            self.tables.pop()
            self._emit_table(table)
        elif table is not None and tag in ("td", "th") and table.cell is not None:
            table.rows[-1].append(_WS.sub(" ", "".join(table.cell)).strip())
            table.cell = None
        elif table is not None and tag == "caption":
            table.in_caption = False
        elif tag == "a" and self.link is not None:
            href, parts = self.link
            self.link = None
            self.builder.add_link(href, "".join(parts))
        elif tag == "pre" and self.pre_depth:
            self._flush()
            self.pre_depth -= 1
        elif tag in _BREAKS and table is None and self.heading is None:
            self._flush()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BREAKS and not self.skip_depth and not self.tables:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if self.in_title:
            self.title.append(data)
            return
        if self.link is not None:
            self.link[1].append(data)
        table = self.tables[-1] if self.tables else None
        if self.heading is not None:
            self.heading[1].append(data)
        elif table is not None and table.cell is not None:
            table.cell.append(data)
        elif table is not None and table.in_caption:
            table.caption.append(data)
        elif table is None:
            self.run.append(data)

    def _emit_table(self, table: _TableState) -> None:
        rows = [r for r in table.rows if any(c for c in r)]
        if not rows:
            return
        header_count = max(1, table.header_rows)
        header = [" ".join(c for c in col if c) for col in zip(*rows[:header_count], strict=False)]
        self.builder.add_table(header, rows[header_count:], caption="".join(table.caption))

    def close(self) -> None:
        super().close()
        while self.tables:
            self._emit_table(self.tables.pop())
        self._flush()


class HtmlLoader(Loader):
    formats: ClassVar[tuple[str, ...]] = ("html",)
    extensions: ClassVar[tuple[str, ...]] = (".html", ".htm", ".xhtml")

    def sniff(self, head: bytes) -> bool:
        start = head.lstrip()[:1024].lower()
        return start.startswith((b"<!doctype html", b"<html")) or b"<html" in start

    def load(self, path: Path, *, password: str | None = None) -> Iterator[SourceDocument]:
        builder = TextBuilder(path.stem)
        parser = _Extractor(builder)
        parser.feed(read_text(path))
        parser.close()
        title = _WS.sub(" ", "".join(parser.title)).strip()
        builder.title = title or parser.first_h1 or path.stem
        yield builder.finish(source=str(path), format="html", sha256=sha256_file(path))
