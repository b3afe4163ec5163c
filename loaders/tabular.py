"""CSV, TSV and XLSX. Each table is placed once in the text and also registered as a text block, so a
spreadsheet has retrievable text (the chunker splits the table's markdown at row boundaries) besides
its single table chunk.

Ragged rows are recovered, never dropped: a short row is padded with empty cells; a row with extra
cells keeps them, and the header is widened with ``column_N`` names so no value is lost. Every
recovered row is listed in ``metadata["ragged_rows"]`` (``"line 3: 2 of 3 cells; ..."``) and logged.
"""

from __future__ import annotations

import csv
import io
import logging
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import openpyxl
from openpyxl.utils.exceptions import InvalidFileException

from kg.errors import LoaderError
from loaders.base import Loader, require_nonempty
from loaders.builder import TextBuilder, sha256_file
from loaders.models import SourceDocument
from loaders.text import read_text

__all__ = ["CsvLoader", "XlsxLoader", "normalise_rows"]

log = logging.getLogger(__name__)


def normalise_rows(
    rows: Sequence[Sequence[str]], line_numbers: Sequence[int]
) -> tuple[list[str], list[list[str]], str]:
    """Header, rectangular body and a description of the ragged rows that were repaired.

    ``line_numbers[i]`` is the file line (or sheet row) of ``rows[i]``, so reports point into the file
    even when quoted newlines or blank rows shift the count.
    """
    header = [str(c).strip() for c in rows[0]]
    width = max(len(r) for r in rows)
    header += [f"column_{n + 1}" for n in range(len(header), width)]
    notes = []
    body: list[list[str]] = []
    for offset, row in enumerate(rows[1:], start=1):
        if len(row) != len(rows[0]):
            notes.append(f"line {line_numbers[offset]}: {len(row)} of {len(rows[0])} cells")
        body.append([*row, *[""] * (width - len(row))])
    return header, body, "; ".join(notes)


class CsvLoader(Loader):
    """Comma- or tab-separated values (by extension); quoted fields with newlines are handled by csv."""

    formats: ClassVar[tuple[str, ...]] = ("csv", "tsv")
    extensions: ClassVar[tuple[str, ...]] = (".csv", ".tsv", ".tab")

    def sniff(self, head: bytes) -> bool:
        # Delimited text is indistinguishable from prose by content alone; extensions decide.
        return False

    def load(self, path: Path, *, password: str | None = None) -> Iterator[SourceDocument]:
        fmt = "csv" if path.suffix.lower() == ".csv" else "tsv"
        reader = csv.reader(io.StringIO(read_text(path), newline=""), delimiter="," if fmt == "csv" else "\t")
        rows: list[list[str]] = []
        lines: list[int] = []
        try:
            for row in reader:
                if any(cell.strip() for cell in row):
                    rows.append(row)
                    lines.append(reader.line_num)
        except csv.Error as exc:
            where = f"line {reader.line_num}"
            raise LoaderError(str(path), f"malformed {fmt.upper()}: {exc}", where) from exc
        if not rows:
            raise LoaderError(str(path), f"no rows in {fmt.upper()} file")
        builder = TextBuilder(path.stem)
        header, body, ragged = normalise_rows(rows, lines)
        if ragged:
            log.warning("%s: recovered ragged rows (%s)", path, ragged)
        builder.add_table(header, body, as_block=True)
        metadata = {"ragged_rows": ragged} if ragged else {}
        yield builder.finish(source=str(path), format=fmt, sha256=sha256_file(path), metadata=metadata)


def _cell_text(value: object) -> str:
    return "" if value is None else str(value)


class XlsxLoader(Loader):
    """Excel workbooks: every non-empty sheet becomes a level-1 section holding its table."""

    formats: ClassVar[tuple[str, ...]] = ("xlsx",)
    extensions: ClassVar[tuple[str, ...]] = (".xlsx", ".xlsm")

    def sniff(self, head: bytes) -> bool:
        return head.startswith(b"PK\x03\x04") and b"xl/" in head

    def load(self, path: Path, *, password: str | None = None) -> Iterator[SourceDocument]:
        require_nonempty(path)
        try:
            workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
        except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
            raise LoaderError(str(path), f"not a readable .xlsx workbook: {exc}") from exc
        builder = TextBuilder(workbook.properties.title or path.stem)
        notes = []
        try:
            for sheet in workbook.worksheets:
                numbered = [
                    (n, [_cell_text(v) for v in row])
                    for n, row in enumerate(sheet.iter_rows(values_only=True), start=1)
                ]
                numbered = [(n, r) for n, r in numbered if any(c.strip() for c in r)]
                if not numbered:
                    continue
                rows = [r for _, r in numbered]
                # Trailing empty columns are formatting residue, not data.
                width = max(max((i + 1 for i, c in enumerate(r) if c.strip()), default=0) for r in rows)
                rows = [r[:width] for r in rows]
                header, body, _ = normalise_rows(rows, [n for n, _ in numbered])
                builder.heading(sheet.title, 1)
                builder.add_table(header, body, caption=sheet.title, as_block=True)
                notes.append(sheet.title)
        finally:
            workbook.close()
        metadata = {"sheets": ", ".join(notes)}
        yield builder.finish(source=str(path), format="xlsx", sha256=sha256_file(path), metadata=metadata)
