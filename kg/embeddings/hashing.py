"""A deterministic hash-based embedder (feature hashing of words, CJK characters and character trigrams).

No model, no network, identical output on every machine: for unit tests and the scripted server. Texts
sharing words get closer vectors, so it behaves plausibly in retrieval tests.

>>> emb = HashingEmbedder(dimensions=64)
>>> a, b, c = emb.embed(["neo4j graph database", "graph database neo4j", "banana bread recipe"])
>>> bool(a @ b > a @ c)
True
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kg.embeddings.base import Embedder, l2_normalise
from kg.shared.text import has_cjk

__all__ = ["HashingEmbedder"]

_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder(Embedder):
    """Feature hashing (blake2b, signed) into ``dimensions`` buckets, L2-normalised."""

    def __init__(self, dimensions: int = 256, *, trigrams: bool = True) -> None:
        if dimensions < 1:
            raise ValueError("dimensions must be >= 1")
        self.dimensions = dimensions
        self.trigrams = trigrams
        self.name = f"hash:{dimensions}"

    def _features(self, text: str) -> list[str]:
        feats: list[str] = []
        for word in _TOKEN.findall(text.lower()):
            if has_cjk(word):
                chars = list(word)
                feats.extend(f"c:{ch}" for ch in chars)
                feats.extend(f"b:{x}{y}" for x, y in itertools.pairwise(chars))
                continue
            feats.append(f"w:{word}")
            if self.trigrams and len(word) > 3:
                padded = f"<{word}>"
                feats.extend(f"t:{padded[i:i + 3]}" for i in range(len(padded) - 2))
        return feats

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                weight = 1.0 if feat.startswith(("w:", "c:")) else 0.3
                out[row, value % self.dimensions] += weight if (value >> 63) & 1 else -weight
        return l2_normalise(out)
