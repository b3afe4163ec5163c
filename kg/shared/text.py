"""Text utilities every layer shares, cheap and dependency-free: CJK detection (one definition of the
scripts, one language threshold), and token counts (the chunker's unit and the LLM budget's estimate).

>>> estimate_tokens("The quick brown fox")
4
>>> detect_language("知识图谱是什么?")
'zh'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Literal

__all__ = [
    "CJK_CHARACTER", "CJK_CHARACTERS", "LANGUAGE_CJK_SHARE", "MAX_WORD_CHARS", "cjk_share", "count_tokens",
    "detect_language", "estimate_messages_tokens", "estimate_tokens", "has_cjk", "is_cjk", "text_key", "title_core",
    "token_spans",
]

_CJK_RANGES = (
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0x20000, 0x2A6DF),  # Extension B
)
# The same scripts as a regular-expression class body, for the code that scans with patterns.
CJK_CHARACTERS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES)
# A text is Chinese (prompts, analyzers, language tags) when at least this share of its visible characters is CJK.
LANGUAGE_CJK_SHARE = 0.15
# The chunker's longest word: a longer run of non-space characters counts as several.
MAX_WORD_CHARS = 100
_WORD = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")
_CHUNK_TOKEN = re.compile(
    rf"[{CJK_CHARACTERS}]|[^\s{CJK_CHARACTERS}]{{1,{MAX_WORD_CHARS}}}|\s{{{MAX_WORD_CHARS}}}"
)


# One CJK character, for the code that scans with patterns.
CJK_CHARACTER = re.compile(f"[{CJK_CHARACTERS}]")
_FIRST_CJK_CODE = min(lo for lo, _ in _CJK_RANGES)


def is_cjk(ch: str) -> bool:
    """True when ``ch`` is a CJK ideograph, kana or hangul syllable."""
    code = ord(ch)
    # Most characters a loader sees come before every CJK block: one comparison settles them.
    return code >= _FIRST_CJK_CODE and any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def has_cjk(text: str) -> bool:
    """True when ``text`` holds at least one CJK character (one regular-expression scan, not a call per
    character: this runs for every word a load writes)."""
    return not text.isascii() and CJK_CHARACTER.search(text) is not None


def cjk_share(text: str) -> float:
    """Share of CJK characters among the non-space characters of ``text`` (0.0 for empty text)."""
    if text.isascii():  # every loaded document asks: settle the common case without a look at each character
        return 0.0
    visible = "".join(text.split())
    return len(CJK_CHARACTER.findall(visible)) / len(visible) if visible else 0.0


def detect_language(text: str, threshold: float = LANGUAGE_CJK_SHARE) -> Literal["en", "zh"]:
    """``"zh"`` when at least ``threshold`` of the non-space characters are CJK, else ``"en"``."""
    return "zh" if cjk_share(text) >= threshold else "en"


def count_tokens(text: str) -> int:
    """The chunker's size unit: words, plus one per CJK character (chunk sizes and overlaps are in these)."""
    return len(_CHUNK_TOKEN.findall(text))


def token_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each of :func:`count_tokens`'s tokens in ``text[start:end]``."""
    return [m.span() for m in _CHUNK_TOKEN.finditer(text, start, len(text) if end is None else end)]


def estimate_tokens(text: str) -> int:
    """Estimate the tokens a BPE tokenizer would produce for ``text``.

    CJK characters count as one token each; other text counts ``max(words * 4/3, chars / 4)``-ish,
    which tracks OpenAI's tokenizers within ~15% on English prose. Deterministic, no dependencies.
    """
    if not text:
        return 0
    cjk = 0
    other: list[str] = []
    for ch in text:
        if is_cjk(ch):
            cjk += 1
            other.append(" ")
        else:
            other.append(ch)
    rest = "".join(other)
    pieces = _WORD.findall(rest)
    words = sum(1 for p in pieces if p[0].isalnum() or p[0] == "_")
    punct = len(pieces) - words
    letters = sum(len(p) for p in pieces if p[0].isalnum() or p[0] == "_")
    by_chars = letters / 4.0
    by_words = words * 1.0
    return cjk + punct + round(max(by_chars, by_words))


def estimate_messages_tokens(messages: Iterable[Mapping[str, object]]) -> int:
    """Estimate the prompt tokens of a chat ``messages`` list (content plus ~4 tokens per message)."""
    total = 0
    for message in messages:
        content = message.get("content")
        total += 4 + (estimate_tokens(content) if isinstance(content, str) else 0)
    return total + 2


def text_key(text: str) -> str:
    """A normalised form for de-duplication: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


_TITLE_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")


def title_core(title: str) -> str:
    """A title without its trailing disambiguation, the name a text calls it by: ``"Tom Smith (footballer)"``
    -> ``"Tom Smith"``."""
    return _TITLE_QUALIFIER.sub("", title).strip()
