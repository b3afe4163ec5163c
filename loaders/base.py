"""The one interface every format loader implements, and helpers they share for failing cleanly."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from kg.errors import LoaderError
from loaders.models import SourceDocument

__all__ = ["Loader", "require_nonempty"]


class Loader(ABC):
    """A parser for one family of formats.

    ``load`` is an iterator because one input may hold many documents (a QA corpus yields one document
    per passage); single-document formats yield exactly one. Every per-file failure is raised as
    :class:`kg.errors.LoaderError` naming the file and, where known, the line, page or field; whatever a
    parser raises beyond the errors a loader anticipates is wrapped by :func:`loaders.load_path`.
    """

    formats: ClassVar[tuple[str, ...]]
    extensions: ClassVar[tuple[str, ...]]

    @abstractmethod
    def sniff(self, head: bytes) -> bool:
        """Whether the first bytes of a file look like this format; used when the extension is unknown."""

    @abstractmethod
    def load(self, path: Path, *, password: str | None = None) -> Iterator[SourceDocument]:
        """Parse ``path``; ``password`` only matters for formats with encryption (PDF)."""


def require_nonempty(path: Path) -> None:
    """Zero-byte files are a common upload mistake; say so instead of a parser's confusing message."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise LoaderError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    if size == 0:
        raise LoaderError(str(path), "file is empty (0 bytes)")
