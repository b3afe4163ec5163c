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
from loaders.text import TextLoader, encoding_warning

__all__ = ["LOADERS", "TEXT_LOADERS", "Skipped", "discover", "load_path", "loader_for"]

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
# Loaders that decode text themselves (see loaders.text): their documents say when the encoding was guessed.
TEXT_LOADERS = (HtmlLoader, QALoader, MarkdownLoader, CsvLoader, TextLoader)
Skipped = list[tuple[Path, str]]  # files discover() saw and did not take, with why
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
            warning = encoding_warning(file) if isinstance(loader, TEXT_LOADERS) else None
            for doc in loader.load(file, password=password):
                if not isinstance(loader, QALoader) and not (doc.text.strip() or doc.tables or doc.figures):
                    raise LoaderError(str(file), _NO_TEXT.get(doc.format, "file is empty (only whitespace)"))
                if warning is not None:
                    doc = doc.model_copy(update={"metadata": {**doc.metadata, "encoding_warning": warning}})
                yield doc
        except StrataError:
            raise
        except Exception as exc:
            detail = next(iter(str(exc).splitlines()), "") or "no detail"
            reason = f"cannot parse as {loader.formats[0].upper()}: {type(exc).__name__}: {detail}"
            raise LoaderError(str(file), reason) from exc


# Why a document without text is refused, by format (text formats: the file holds only whitespace).
_NO_TEXT = {"pdf": "no text could be extracted (a scan without a text layer?)",
            "docx": "no text could be extracted (the document is empty)",
            "xlsx": "no text could be extracted (every sheet is empty)",
            "html": "file is empty (only markup and whitespace)"}


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns)


def discover(
    paths: Iterable[str | Path],
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    skipped: Skipped | None = None,
) -> list[Path]:
    """Files to load under ``paths``, recursively, in a stable sorted order without duplicates.

    Globs match either the path relative to its root (``docs/*.md``) or the bare name (``*.md``).
    Without ``include`` only files with a known extension are taken, so a folder with stray binaries
    does not fail a whole ingest. Hidden files and folders are skipped. Symlinks are never followed out
    of the root: linked folders are not descended and a linked file counts only if it resolves inside
    the root. Explicitly named files are always taken. A link that is not followed (to a folder, out of the
    root, or to nothing) is added to ``skipped`` with why, when a list is given, so a load can report it.
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
            for name in dirnames:
                folder = Path(dirpath) / name
                if folder.is_symlink() and skipped is not None:
                    skipped.append((folder, f"symbolic link to the folder {os.readlink(folder)}: links to "
                                            "folders are not followed (name the folder itself to load it)"))
            for name in filenames:
                if name.startswith("."):
                    continue
                file = Path(dirpath) / name
                rel = file.relative_to(root).as_posix()
                if not _matches(rel, patterns) or _matches(rel, exclude):
                    continue
                if file.is_symlink():
                    why = _unfollowed(file, real_root)
                    if why is not None:
                        if skipped is not None:
                            skipped.append((file, why))
                        continue
                if file.is_file():
                    found[file] = None
    return sorted(found, key=lambda p: p.as_posix())


def _unfollowed(link: Path, real_root: Path) -> str | None:
    """Why the symbolic link ``link`` found under a folder is not loaded, or ``None`` if it is."""
    target = os.readlink(link)
    try:
        resolved = link.resolve(strict=True)
    except (OSError, RuntimeError):
        return f"symbolic link to {target}, which does not exist (or loops): nothing to load"
    if not resolved.is_relative_to(real_root):
        return (f"symbolic link to {target}, outside the folder being loaded: not followed (name the file "
                "itself to load it)")
    if not resolved.is_file():
        return f"symbolic link to {target}, which is not a regular file"
    return None
