"""Word documents via python-docx: ``Heading N`` (and ``Title``) styles become sections, other
paragraphs become blocks, tables become tables, hyperlinks become links, all in body order."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.table import Table as DocxTable
from docx.text.paragraph import Paragraph

from kg.errors import LoaderError
from loaders.base import Loader, require_nonempty
from loaders.builder import TextBuilder, sha256_file
from loaders.models import SourceDocument

__all__ = ["DocxLoader"]

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)


def _heading_level(paragraph: Paragraph) -> int | None:
    name = paragraph.style.name if paragraph.style is not None and paragraph.style.name else ""
    match = _HEADING_STYLE.match(name)
    if match:
        return int(match.group(1))
    return None


class DocxLoader(Loader):
    formats: ClassVar[tuple[str, ...]] = ("docx",)
    extensions: ClassVar[tuple[str, ...]] = (".docx",)

    def sniff(self, head: bytes) -> bool:
        # Zip local headers carry member names, and Word's parts sit early in small files.
        return head.startswith(b"PK\x03\x04") and b"word/" in head

    def load(self, path: Path, *, password: str | None = None) -> Iterator[SourceDocument]:
        require_nonempty(path)
        try:
            document = docx.Document(str(path))
        except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
            raise LoaderError(str(path), f"not a readable .docx file: {exc}") from exc
        builder = TextBuilder(document.core_properties.title or path.stem)
        titled = bool(document.core_properties.title)
        for item in document.iter_inner_content():
            if isinstance(item, DocxTable):
                rows = [[cell.text for cell in row.cells] for row in item.rows]
                if rows:
                    builder.add_table(rows[0], rows[1:])
                continue
            for link in item.hyperlinks:
                builder.add_link(link.address or link.fragment, link.text)
            style = item.style.name if item.style is not None else ""
            level = _heading_level(item)
            if style == "Title" and not titled:
                builder.title, titled = item.text, True
            elif level is not None and item.text.strip():
                builder.heading(item.text, level)
                if level == 1 and not titled:
                    builder.title, titled = item.text, True
            else:
                builder.add_block(item.text)
        yield builder.finish(source=str(path), format="docx", sha256=sha256_file(path))
