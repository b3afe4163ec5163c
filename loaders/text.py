"""Plain text, and the encoding detection every text-based loader (Markdown, HTML, CSV) shares.

Detection order, and why:

1. A BOM (UTF-8, UTF-16, UTF-32) is authoritative.
2. NUL bytes or mostly control characters mean binary junk (an image renamed ``.txt``): refuse it
   rather than index garbage.
3. Strict UTF-8 over the whole file, because it is by far the most common encoding and almost never
   decodes non-UTF-8 data by accident.
4. GB18030, only if it decodes the whole file cleanly *and* the text is mostly CJK: GB18030 accepts
   nearly any byte sequence, so "decodes" alone proves nothing.
5. charset-normalizer's best guess, only when the bytes before the first UTF-8 error were pure ASCII.
   A file that already contains valid UTF-8 multi-byte characters and then a broken byte is a damaged
   UTF-8 file; reinterpreting it as Latin-1 would silently turn every accent into mojibake, so we fail
   naming the byte offset and line instead.

Reading is streamed in 1 MiB blocks through an incremental decoder; see :class:`TextLoader` for the
memory bound.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import charset_normalizer

from kg.errors import LoaderError
from kg.shared.text import cjk_share
from loaders.base import Loader, require_nonempty
from loaders.builder import TextBuilder, sha256_file
from loaders.models import SourceDocument

# Undecodable as UTF-8 but this CJK-rich as GB18030: read as GB18030 (a decoding's plausibility, not a language).
_GB18030_PLAUSIBLE = 0.3
__all__ = ["CERTAIN_ENCODINGS", "TextLoader", "detect_encoding", "encoding_warning", "iter_decoded", "read_text"]

BLOCK_SIZE = 1 << 20
_HEAD_SIZE = 64 * 1024
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Control bytes other than tab, newline, vertical tab, form feed, carriage return and escape.
_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 11, 12, 13, 27))
_MAX_CONTROL_SHARE = 0.1
_MAX_CHAOS = 0.2
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class _DecodeFailure:
    offset: int
    line: int
    saw_non_ascii: bool


def _blocks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        yield from iter(lambda: handle.read(BLOCK_SIZE), b"")


def _first_failure(path: Path, encoding: str) -> _DecodeFailure | None:
    """Decode the whole file without keeping the text; report where strict decoding first fails."""
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    fed = 0
    lines = 1
    saw_non_ascii = False
    for block in _blocks(path):
        buffered = decoder.getstate()[0]
        try:
            text = decoder.decode(block)
        except UnicodeDecodeError as exc:
            # exc.start indexes the decoder's buffered bytes followed by this block.
            offset = fed - len(buffered) + exc.start
            prefix = (buffered + block)[: exc.start]
            return _DecodeFailure(offset, lines + prefix.count(b"\n"), saw_non_ascii or not prefix.isascii())
        fed += len(block)
        lines += text.count("\n")
        saw_non_ascii = saw_non_ascii or not text.isascii()
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return _DecodeFailure(fed - len(decoder.getstate()[0]), lines, saw_non_ascii)
    return None


def detect_encoding(path: Path) -> str:
    """The codec name to decode ``path`` with, or :class:`LoaderError` saying why there is none."""
    require_nonempty(path)
    with path.open("rb") as handle:
        head = handle.read(_HEAD_SIZE)
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    if b"\x00" in head or sum(head.count(c) for c in _CONTROL) > _MAX_CONTROL_SHARE * len(head):
        raise LoaderError(str(path), "binary content (NUL or control bytes), not text", "byte 0")
    failure = _first_failure(path, "utf-8")
    if failure is None:
        return "utf-8"
    gb_head = head.decode("gb18030", errors="ignore")
    if cjk_share(gb_head) > _GB18030_PLAUSIBLE and _first_failure(path, "gb18030") is None:
        return "gb18030"
    if not failure.saw_non_ascii:
        best = charset_normalizer.from_bytes(head).best()
        if best is not None and best.chaos <= _MAX_CHAOS and _first_failure(path, best.encoding) is None:
            return best.encoding
    raise LoaderError(
        str(path),
        f"invalid UTF-8 at byte {failure.offset} and no other encoding decodes the file cleanly",
        f"line {failure.line}",
    )


# Encodings a file proves (a BOM, or valid UTF-8 throughout); any other was guessed from the bytes.
CERTAIN_ENCODINGS = frozenset({"utf-8", "utf-8-sig", "utf-16", "utf-32"})


def encoding_warning(path: Path) -> str | None:
    """The warning a load reports for ``path`` when its encoding was guessed (steps 4 and 5 above), naming
    the encoding; ``None`` when the file is UTF-8 or has a BOM. Raises :class:`LoaderError` like
    :func:`detect_encoding` when there is no encoding at all."""
    encoding = detect_encoding(path)
    if encoding in CERTAIN_ENCODINGS:
        return None
    return (f"not valid UTF-8: decoded as {encoding}, the encoding guessed from its bytes; if the text reads "
            "wrong, convert the file to UTF-8")


def iter_decoded(path: Path, encoding: str | None = None) -> Iterator[str]:
    """Decoded text in pieces of about 1 MiB with newlines normalised to ``"\\n"``.

    A ``"\\r"`` at the end of a piece is held back so a CRLF split across two reads is still one newline.
    """
    decoder = codecs.getincrementaldecoder(encoding or detect_encoding(path))("strict")
    carry = ""
    for block in _blocks(path):
        text = carry + decoder.decode(block)
        carry = "\r" if text.endswith("\r") else ""
        if carry:
            text = text[:-1]
        yield text.replace("\r\n", "\n").replace("\r", "\n")
    tail = carry + decoder.decode(b"", final=True)
    if tail:
        yield tail.replace("\r\n", "\n").replace("\r", "\n")


def read_text(path: Path) -> str:
    """The whole decoded file, for formats whose parsers need all of it (Markdown, HTML, CSV)."""
    return "".join(iter_decoded(path))


class TextLoader(Loader):
    """Plain text: one block per paragraph (paragraphs are separated by blank lines), no sections.

    Memory bound: the file is read in 1 MiB blocks and only the current unfinished paragraph is
    buffered, so apart from the result itself the overhead is one block plus the longest paragraph.
    The paragraphs are held until :meth:`TextBuilder.finish` joins them (twice the text for that moment);
    the result holds the joined ``SourceDocument.text`` (1, 2 or 4 bytes a character, as Python stores the
    widest one) plus one ``TextBlock`` span per paragraph, about 0.5 KB each. No list of lines is ever built.
    """

    formats: ClassVar[tuple[str, ...]] = ("text",)
    extensions: ClassVar[tuple[str, ...]] = (".txt", ".text", ".log")

    def sniff(self, head: bytes) -> bool:
        return b"\x00" not in head and sum(head.count(c) for c in _CONTROL) <= _MAX_CONTROL_SHARE * len(head)

    def load(self, path: Path, *, password: str | None = None) -> Iterator[SourceDocument]:
        builder = TextBuilder(path.stem)
        pending = ""
        for piece in iter_decoded(path):
            # Rescan only from the last newline of the unfinished tail, where a break could begin.
            last_newline = pending.rfind("\n", max(0, len(pending) - 4096))
            scan_from = last_newline if last_newline >= 0 else len(pending)
            pending += piece
            start = 0
            for match in _PARAGRAPH_BREAK.finditer(pending, scan_from):
                builder.add_block(pending[start : match.start()])
                start = match.end()
            pending = pending[start:]
        builder.add_block(pending)
        yield builder.finish(source=str(path), format="text", sha256=sha256_file(path))
