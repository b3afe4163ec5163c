"""Choosing a loader for a path, and finding loadable files under folders."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from kg.errors import LoaderError, StrataError
from loaders.base import Loader, require_nonempty
from loaders.docx import DocxLoader
from loaders.html import HtmlLoader
from loaders.markdown import MarkdownLoader
from loaders.models import SourceDocument
from loaders.pdf import PdfLoader
from loaders.qa import QALoader
from loaders.tabular import CsvLoader, XlsxLoader
from loaders.text import TextLoader

__all__ = ["LOADERS", "discover", "load_path", "loader_for"]

# Sniffing order matters: specific signatures first, plain text (which accepts almost anything
# printable) last.
LOADERS: tuple[Loader, ...] = (
    PdfLoader(),
    DocxLoader(),
    XlsxLoader(),
    HtmlLoader(),
    QALoader(),
    MarkdownLoader(),
    CsvLoader(),
    TextLoader(),
)
_BY_EXTENSION = {ext: loader for loader in LOADERS for ext in loader.extensions}
_SNIFF_BYTES = 64 * 1024


def loader_for(path: Path) -> Loader:
    """By extension first (cheap and what users expect), else by content."""
    loader = _BY_EXTENSION.get(path.suffix.lower())
    if loader is not None:
        return loader
    require_nonempty(path)
    with path.open("rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    for candidate in LOADERS:
        if candidate.sniff(head):
            return candidate
    suffix = path.suffix or "none"
    raise LoaderError(str(path), f"unknown format (extension {suffix!r}, content not recognised)")


def load_path(path: str | Path, password: str | None = None) -> Iterator[SourceDocument]:
    """Load one file, or every discoverable file under a folder, yielding documents lazily.

    This is the loader boundary: whatever a parser raises on a damaged file (lxml's XMLSyntaxError from a
    truncated .docx part, ElementTree's ParseError from a truncated sheet, PyMuPDF losing its page tree
    while repairing a PDF, ...) leaves it as a :class:`LoaderError` naming the file, so the caller can
    report that file and carry on with the others.
    """
    root = Path(path)
    if not root.exists():
        raise LoaderError(str(root), "no such file or directory")
    files = discover([root]) if root.is_dir() else [root]
    for file in files:
        loader = loader_for(file)
        try:
            yield from loader.load(file, password=password)
        except StrataError:
            raise
        except Exception as exc:
            detail = next(iter(str(exc).splitlines()), "") or "no detail"
            reason = f"cannot parse as {loader.formats[0].upper()}: {type(exc).__name__}: {detail}"
            raise LoaderError(str(file), reason) from exc


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns)


def discover(
    paths: Iterable[str | Path],
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
) -> list[Path]:
    """Files to load under ``paths``, recursively, in a stable sorted order without duplicates.

    Globs match either the path relative to its root (``docs/*.md``) or the bare name (``*.md``).
    Without ``include`` only files with a known extension are taken, so a folder with stray binaries
    does not fail a whole ingest. Hidden files and folders are skipped. Symlinks are never followed out
    of the root: linked folders are not descended and a linked file counts only if it resolves inside
    the root. Explicitly named files are always taken.
    """
    patterns = list(include) if include is not None else [f"*{ext}" for ext in _BY_EXTENSION]
    found: dict[Path, None] = {}
    for given in paths:
        root = Path(given)
        if root.is_file():
            found[root] = None
            continue
        if not root.is_dir():
            raise LoaderError(str(root), "no such file or directory")
        real_root = root.resolve()
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                if name.startswith("."):
                    continue
                file = Path(dirpath) / name
                rel = file.relative_to(root).as_posix()
                if not _matches(rel, patterns) or _matches(rel, exclude):
                    continue
                if file.is_symlink() and not file.resolve().is_relative_to(real_root):
                    continue
                if file.is_file():
                    found[file] = None
    return sorted(found, key=lambda p: p.as_posix())
