"""Deterministic generated passages for benchmarks: pseudo-words, so no data set has to be shipped."""

from __future__ import annotations

import json
import random
from pathlib import Path

__all__ = ["generate_corpus", "write_corpus"]

_SYLLABLES = ["ka", "lo", "mi", "ra", "ten", "vo", "shi", "an", "del", "por", "qu", "ist", "ber", "um", "zo", "ne"]


def generate_corpus(passages: int, *, seed: int = 7) -> list[dict[str, str]]:
    """``passages`` records ``{title, text}`` of 3 to 6 sentences each, the same for the same seed; every
    passage but the first names the one before it by title, so title-mention linking has work to do."""
    rng = random.Random(seed)
    vocabulary = sorted({"".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4))) for _ in range(4000)})
    names = [w.capitalize() for w in vocabulary[:400]]
    corpus: list[dict[str, str]] = []
    for i in range(passages):
        sentences = []
        for _ in range(rng.randint(3, 6)):
            words = rng.choices(vocabulary, k=rng.randint(8, 20))
            words[rng.randrange(len(words))] = rng.choice(names)
            sentences.append(" ".join(words).capitalize() + ".")
        if corpus:
            sentences.append(f"It follows {corpus[-1]['title']}.")
        corpus.append({"title": f"Passage {i} {rng.choice(names)}", "text": " ".join(sentences)})
    return corpus


def write_corpus(path: Path, passages: int, *, seed: int = 7) -> Path:
    path.write_text(json.dumps(generate_corpus(passages, seed=seed)), "utf-8")
    return path
