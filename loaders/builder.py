"""Shared assembly of a :class:`SourceDocument`, used by every loader.

Each loader only walks its format and calls :class:`TextBuilder`; the builder owns the invariants so no
loader can get them wrong on its own: blocks are joined with ``"\\n\\n"`` and their offsets index into the
final text, section keys are paths (``"1"``, ``"1.2"``) under the root ``"0"``, and tables/figures get a
span in the text where they sit.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Sequence
from pathlib import Path

from kg.shared.text import detect_language
from loaders.models import Figure, Link, Section, SourceDocument, Table, TextBlock

__all__ = ["TextBuilder", "render_csv", "render_markdown_table", "sha256_file"]

_SEPARATOR = "\n\n"
# Memory bound of a document's blocks whatever its structure: past MANY_BLOCKS blocks, a block shorter than
# SMALL_BLOCK characters is joined to the one before it, up to JOINED_BLOCK characters.
MANY_BLOCKS = 5_000
SMALL_BLOCK = 200
JOINED_BLOCK = 2_000
_WS = re.compile(r"\s+")


def sha256_file(path: Path) -> str:
    """Hash the raw bytes in 1 MiB blocks so a huge input never has to sit in memory for its id."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _cell(value: str) -> str:
    return _WS.sub(" ", value).strip().replace("|", "\\|")


def render_markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub pipe table; whitespace (including newlines) inside cells is collapsed so rows stay rows."""
    width = max([len(header), *(len(r) for r in rows)]) if (header or rows) else 0
    head = [*header, *[""] * (width - len(header))]
    lines = ["| " + " | ".join(_cell(h) for h in head) + " |", "|" + "---|" * width]
    for row in rows:
        padded = [*row, *[""] * (width - len(row))]
        lines.append("| " + " | ".join(_cell(c) for c in padded) + " |")
    return "\n".join(lines)


def render_csv(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


class TextBuilder:
    """Accumulates a document's text, sections, blocks, tables, figures and links in reading order.

    Text parts are kept in a list and joined once in :meth:`finish`, so building costs one extra copy of
    the text at the end rather than quadratic string concatenation.
    """

    def __init__(self, title: str) -> None:
        self.title = title
        self._parts: list[str] = []
        self._length = 0
        self.sections: list[Section] = [Section(key="0", title=title, level=0, order=0, parent_key=None)]
        # Open headings as (level, key); the root is level 0 and never popped.
        self._stack: list[tuple[int, str]] = [(0, "0")]
        self._children: dict[str, int] = {}
        self.blocks: list[TextBlock] = []
        self.tables: list[Table] = []
        self.figures: list[Figure] = []
        self.links: list[Link] = []

    @property
    def section_key(self) -> str:
        return self._stack[-1][1]

    def heading(self, title: str, level: int, page: int | None = None) -> str:
        """Open a section; a heading closes every open section at its level or deeper."""
        level = max(1, level)
        while self._stack[-1][0] >= level:
            self._stack.pop()
        parent = self._stack[-1][1]
        number = self._children.get(parent, 0) + 1
        self._children[parent] = number
        key = str(number) if parent == "0" else f"{parent}.{number}"
        clean = _WS.sub(" ", title).strip()
        self.sections.append(
            Section(key=key, title=clean, level=level, order=len(self.sections), parent_key=parent, page=page)
        )
        self._stack.append((level, key))
        return key

    def _append(self, text: str) -> tuple[int, int]:
        if self._parts:
            self._parts.append(_SEPARATOR)
            self._length += len(_SEPARATOR)
        start = self._length
        self._parts.append(text)
        self._length += len(text)
        return start, self._length

    def add_block(self, text: str, page: int | None = None) -> TextBlock | None:
        """Append a paragraph; blank input is dropped. Inner blank lines are collapsed so that ``"\\n\\n"``
        in the document text always means a block boundary."""
        text = re.sub(r"\n\s*\n", "\n", text.strip())
        if not text:
            return None
        last = self.blocks[-1] if self.blocks else None
        if (len(self.blocks) >= MANY_BLOCKS and len(text) < SMALL_BLOCK and last is not None
                and last.char_end == self._length and last.section_key == self.section_key and last.page == page
                and last.char_end - last.char_start < JOINED_BLOCK):
            # A page of countless tiny blocks (a million one-word list items) would cost ~1 KB of objects per
            # word: past MANY_BLOCKS, a tiny block joins the one before it (a newline between them).
            self._parts.append("\n")
            self._parts.append(text)
            self._length += 1 + len(text)
            joined = TextBlock(section_key=last.section_key, page=page, char_start=last.char_start,
                               char_end=self._length)
            self.blocks[-1] = joined
            return joined
        start, end = self._append(text)
        block = TextBlock(section_key=self.section_key, page=page, char_start=start, char_end=end)
        self.blocks.append(block)
        return block

    def add_table(
        self,
        header: Sequence[str],
        rows: Sequence[Sequence[str]],
        *,
        caption: str = "",
        page: int | None = None,
        as_block: bool = False,
    ) -> Table:
        """Place the table's markdown in the text (its span is where it sits). Body blocks never repeat it,
        except with ``as_block`` for formats whose only content is tables (CSV, XLSX), where it is also the
        text chunker's input."""
        head = [str(h) for h in header]
        body = [[str(c) for c in row] for row in rows]
        markdown = render_markdown_table(head, body)
        start, end = self._append(markdown)
        table = Table(
            key=f"t{len(self.tables) + 1}",
            section_key=self.section_key,
            page=page,
            caption=caption.strip(),
            header=head,
            rows=body,
            markdown=markdown,
            csv=render_csv(head, body),
            char_start=start,
            char_end=end,
        )
        self.tables.append(table)
        if as_block:
            self.blocks.append(
                TextBlock(section_key=self.section_key, page=page, char_start=start, char_end=end)
            )
        return table

    def add_figure(self, caption: str, page: int | None = None) -> Figure:
        """The caption is placed in the text as the figure's span; a figure without caption gets an empty
        span at the current position so it still has a place in reading order."""
        caption = _WS.sub(" ", caption).strip()
        if caption:
            start, end = self._append(caption)
        else:
            start = end = self._length
        figure = Figure(
            key=f"f{len(self.figures) + 1}",
            section_key=self.section_key,
            page=page,
            caption=caption,
            char_start=start,
            char_end=end,
        )
        self.figures.append(figure)
        return figure

    def add_link(self, target: str, text: str = "", page: int | None = None) -> None:
        target = target.strip()
        if target:
            self.links.append(Link(target=target, text=_WS.sub(" ", text).strip(), page=page))

    def finish(
        self,
        *,
        source: str,
        format: str,
        sha256: str,
        pages: int | None = None,
        metadata: dict[str, str] | None = None,
    ) -> SourceDocument:
        text = "".join(self._parts)
        self._parts = [text]
        title = _WS.sub(" ", self.title).strip() or Path(source).stem
        sections = [self.sections[0].model_copy(update={"title": title}), *self.sections[1:]]
        return SourceDocument(
            source=source,
            title=title,
            format=format,
            sha256=sha256,
            text=text,
            pages=pages,
            metadata=metadata or {},
            sections=sections,
            blocks=self.blocks,
            tables=self.tables,
            figures=self.figures,
            links=self.links,
            language=detect_language(text[:20000]),
        )
