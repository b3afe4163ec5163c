"""Structure-aware chunking: a pure function from a :class:`SourceDocument` to retrieval chunks.

Rules, and why:

* Text chunks never cross a section (a chunk should be about one topic, and the graph hangs chunks off
  their section) nor a table or figure sitting between blocks.
* Chunks hold whole sentences, so no fact is cut in half; only a single sentence longer than the budget
  is split, at token boundaries.
* Consecutive chunks overlap by whole trailing sentences (at most ``overlap`` tokens) so a fact that
  straddles a boundary is still retrievable with its context.
* Tokens are approximated (whitespace-separated words; each CJK character counts as one) to stay
  model-independent and fast; budgets are soft guides for embedding windows, not hard limits. A "word" of
  more than :data:`MAX_WORD_CHARS` characters (a hash, a base64 blob, 3 MB of one letter) counts as one
  token per :data:`MAX_WORD_CHARS` characters and is cut there; so does a run of whitespace that long (the
  indentation of a list nested thousands deep). So a chunk holds at most ``max_tokens`` tokens with less
  than ``MAX_WORD_CHARS`` characters of whitespace between two of them: at most about
  ``2 * max_tokens * MAX_WORD_CHARS`` characters whatever the input.
* Each table and figure becomes one chunk of its own, pointing back at it through ``ref_key``.

Enhanced chunking (PIKE-RAG's recurrent splitting with forward summaries) builds on this elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kg.shared.ids import chunk_ids
from kg.shared.text import MAX_WORD_CHARS, count_tokens, token_spans
from loaders.models import Chunk, ChunkKind, SourceDocument, TextBlock

__all__ = [
    "DEFAULT_MAX_TOKENS", "DEFAULT_OVERLAP", "MAX_WORD_CHARS", "chunk_document", "count_tokens", "split_sentences",
]

DEFAULT_MAX_TOKENS = 256
DEFAULT_OVERLAP = 32
# A sentence ends at Western punctuation followed by whitespace, at Chinese full-width stops (no space
# follows them in Chinese), or at a line break; closing quotes/brackets stay with the sentence.
_SENTENCE_END = re.compile(
    r"(?:[.!?]+[\"'\u201d\u2019)\]]*(?=\s)|[\u3002\uff01\uff1f\uff1b]+[\u201d\u2019\u300d\u300f\uff09)]*|\n)"
)
# Abbreviations that end in a period but rarely end a sentence.
_ABBREVIATION = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|vs|etc|e\.g|i\.e|Fig|No|cf)|\b[A-Z])\.$")


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans ``(start, end)`` of the sentences of ``text[start:end]``, stripped of surrounding space."""
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    begin = start
    for match in _SENTENCE_END.finditer(text, start, stop):
        if match.group().startswith(".") and _ABBREVIATION.search(text, begin, match.end()):
            continue
        spans.append((begin, match.end()))
        begin = match.end()
    spans.append((begin, stop))
    stripped = []
    for a, b in spans:
        piece = text[a:b]
        left = len(piece) - len(piece.lstrip())
        right = len(piece.rstrip())
        if right > left:
            stripped.append((a + left, a + right))
    return stripped


def _split_long(text: str, span: tuple[int, int], max_tokens: int) -> list[tuple[int, int]]:
    """Cut one over-long sentence into pieces of at most ``max_tokens`` tokens, at token boundaries."""
    tokens = token_spans(text, span[0], span[1])
    return [
        (tokens[i][0], tokens[min(i + max_tokens, len(tokens)) - 1][1])
        for i in range(0, len(tokens), max_tokens)
    ]


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    tokens: int
    page: int | None
    ends_block: bool = False  # the last sentence of a paragraph


def _runs(blocks: list[TextBlock]) -> list[list[TextBlock]]:
    """Group blocks into runs a chunk may span: same section, and only ``"\\n\\n"`` between them."""
    runs: list[list[TextBlock]] = []
    for block in blocks:
        last = runs[-1][-1] if runs else None
        if (
            last is not None
            and last.section_key == block.section_key
            and block.char_start == last.char_end + 2
        ):
            runs[-1].append(block)
        else:
            runs.append([block])
    return runs


def _pack(units: list[_Unit], max_tokens: int, overlap: int, settle: int) -> list[list[_Unit]]:
    """Greedy packing into chunks; each new chunk repeats the previous chunk's trailing sentences that fit
    in ``overlap`` tokens, but never all of it (that would not make progress).

    A paragraph that does not fit in what is left of a chunk of at least ``settle`` tokens starts the next
    chunk, with no overlap, instead of being split. So a paragraph is split only when it does not fit a chunk,
    and chunk boundaries fall back into step soon after an edit: a replaced document keeps the chunks (and
    their distillation) away from its edits (measured in docs/scaling.md, "Replacing a document")."""
    rest = [0] * len(units)  # tokens from each unit to the end of its paragraph
    tail = 0
    for i in range(len(units) - 1, -1, -1):
        tail = units[i].tokens + (0 if units[i].ends_block else tail)
        rest[i] = tail
    groups: list[list[_Unit]] = []
    current: list[_Unit] = []
    size = 0
    fresh = 0  # units in ``current`` that are not overlap carried from the previous chunk
    for i, unit in enumerate(units):
        if current and fresh and current[-1].ends_block and size >= settle and size + rest[i] > max_tokens:
            groups.append(current)
            current, size, fresh = [], 0, 0
        if current and fresh and size + unit.tokens > max_tokens:
            groups.append(current)
            carried: list[_Unit] = []
            carried_size = 0
            for prev in reversed(current[1:]):
                if (
                    carried_size + prev.tokens > overlap
                    or carried_size + prev.tokens + unit.tokens > max_tokens
                ):
                    break
                carried.insert(0, prev)
                carried_size += prev.tokens
            current, size, fresh = carried, carried_size, 0
        current.append(unit)
        size += unit.tokens
        fresh += 1
    if current and fresh:
        groups.append(current)
    return groups


def chunk_document(
    doc: SourceDocument,
    document_id: str,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    overlap: int = DEFAULT_OVERLAP,
) -> list[Chunk]:
    """Chunks of ``doc`` in reading order; ids are deterministic from ``document_id`` and text."""
    if max_tokens < 1 or overlap < 0:
        raise ValueError("max_tokens must be >= 1 and overlap >= 0")
    text = doc.text
    # (char_start, char_end, kind, section, page, chunk text, ref_key)
    drafts: list[tuple[int, int, ChunkKind, str, int | None, str, str | None]] = []
    for run in _runs(doc.blocks):
        units: list[_Unit] = []
        for block in run:
            if units:
                units[-1] = replace(units[-1], ends_block=True)
            for span in split_sentences(text, block.char_start, block.char_end):
                tokens = count_tokens(text[span[0] : span[1]])
                pieces = _split_long(text, span, max_tokens) if tokens > max_tokens else [span]
                for a, b in pieces:
                    # The whitespace before a unit is in the chunk that joins it to the one before: it counts.
                    gap = count_tokens(text[units[-1].end : a]) if units else 0
                    units.append(_Unit(a, b, gap + count_tokens(text[a:b]), block.page))
        for group in _pack(units, max_tokens, overlap, settle=max_tokens // 4):
            start, end = group[0].start, group[-1].end
            drafts.append((start, end, "text", run[0].section_key, group[0].page, text[start:end], None))
    for table in doc.tables:
        body = f"{table.caption}\n\n{table.markdown}" if table.caption else table.markdown
        drafts.append(
            (table.char_start, table.char_end, "table", table.section_key, table.page, body, table.key)
        )
    for figure in doc.figures:
        caption = figure.caption or f"[figure {figure.key}]"
        drafts.append(
            (
                figure.char_start,
                figure.char_end,
                "figure",
                figure.section_key,
                figure.page,
                caption,
                figure.key,
            )
        )
    kinds = {"text": 0, "table": 1, "figure": 1}
    drafts.sort(key=lambda d: (d[0], kinds[d[2]], d[1]))
    ids = chunk_ids(document_id, (d[5] for d in drafts))
    return [
        Chunk(
            id=ids[order],
            document_id=document_id,
            section_key=section,
            order=order,
            kind=kind,
            text=body,
            page=page,
            char_start=start,
            char_end=end,
            tokens=count_tokens(body),
            ref_key=ref,
        )
        for order, (start, end, kind, section, page, body, ref) in enumerate(drafts)
    ]
