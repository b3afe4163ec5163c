"""The offline default embedder: WordLlama ``l2_supercat`` (256 dimensions), weights from the wheel.

No network: the model is loaded with the package folder as cache (where the wheel ships ``weights/`` and
``tokenizers/``) and downloads disabled. Importing ``wordllama`` calls ``logging.basicConfig``; we undo that
so Strata's logging configuration stays the application's.

Example::

    emb = WordLlamaEmbedder()
    emb.dimensions, emb.embed(["hello world"]).shape   # (256, (1, 256))
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kg.embeddings.base import Embedder, l2_normalise
from kg.errors import EmbeddingError

__all__ = ["WordLlamaEmbedder", "load_wordllama"]

log = logging.getLogger(__name__)


def _import_wordllama() -> Any:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
    finally:  # wordllama's __init__ calls logging.basicConfig(level=INFO): restore the root logger
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
    return wordllama


@functools.lru_cache(maxsize=4)
def load_wordllama(config: str = "l2_supercat", dim: int = 256) -> Any:
    """The WordLlama model, loaded once per process from the installed wheel (never downloads)."""
    try:
        wordllama = _import_wordllama()
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise EmbeddingError("the wordllama package is not installed: pip install 'wordllama>=0.4'") from exc
    package_dir = Path(wordllama.__file__).parent
    try:
        return wordllama.WordLlama.load(config=config, dim=dim, cache_dir=package_dir, disable_download=True)
    except (FileNotFoundError, OSError, ValueError) as exc:
        raise EmbeddingError(
            f"cannot load WordLlama {config!r} ({dim} dims) from {package_dir} without a download: {exc}"
        ) from exc


class WordLlamaEmbedder(Embedder):
    """Static word embeddings (mean-pooled), L2-normalised float32; fast on CPU, fully offline."""

    def __init__(self, config: str = "l2_supercat", dimensions: int = 256, *, batch_size: int = 64) -> None:
        self.config = config
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.name = f"wordllama:{config}_{dimensions}"
        self._model = load_wordllama(config, dimensions)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        # Similar lengths together: WordLlama pads a batch to its longest text and gathers a (batch, longest,
        # dimensions) array, so one long text made its 255 neighbours cost as much. Sorted, in batches of 64,
        # 30,000 sentences embed in 1.8 s instead of 6.5 and 8,000 chunks of 1,400 characters in 1.8 s instead of
        # 8.9, the same vectors (docs/scaling.md); a batch's array is at most a few tens of MB.
        order = np.argsort(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), kind="stable")
        by_length = self._model.embed([texts[i] for i in order], norm=False, return_np=True,
                                      batch_size=self.batch_size)
        vectors = np.empty_like(by_length)
        vectors[order] = by_length
        return l2_normalise(vectors)  # our normalisation: empty texts give zero rows, not NaN
