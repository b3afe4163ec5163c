"""Optional: a local sentence-transformers model (needs the ``sentence-transformers`` extra and PyTorch).

Install with ``pip install 'strata-kg[sentence-transformers]'``. The model must already be on disk (a local
path or a hub cache): Strata never downloads at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kg.embeddings.base import Embedder, l2_normalise
from kg.errors import ConfigError, EmbeddingError

__all__ = ["SentenceTransformerEmbedder"]

INSTALL_HINT = "pip install 'strata-kg[sentence-transformers]'"


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model loaded from a local path or cache (``local_files_only``)."""

    def __init__(self, model: str, *, device: str | None = None, batch_size: int = 64) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ConfigError(
                f"STRATA_EMBEDDER=sentence-transformers needs the optional extra: {INSTALL_HINT}"
            ) from exc
        try:
            self._model: Any = SentenceTransformer(model, device=device, local_files_only=True)
        except Exception as exc:
            raise EmbeddingError(f"cannot load sentence-transformers model {model!r} offline: {exc}") from exc
        self.name = f"sentence-transformers:{model}"
        self.dimensions = int(self._model.get_sentence_embedding_dimension())
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self._model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=False)
        return l2_normalise(vectors)
