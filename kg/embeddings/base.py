"""The one interface every embedder implements.

>>> from kg.embeddings.hashing import HashingEmbedder
>>> emb = HashingEmbedder(dimensions=32)
>>> emb.embed(["a graph", "a tree"]).shape
(2, 32)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "l2_normalise"]


def l2_normalise(vectors: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Rows scaled to unit L2 norm, as float32 (all-zero rows stay zero)."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: npt.NDArray[np.float32] = (arr / norms).astype(np.float32, copy=False)
    return result


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors of ``dimensions`` components.

    ``name`` identifies the model (stored on the graph to detect embedder mismatches), e.g.
    ``"wordllama:l2_supercat_256"`` or ``"openai:text-embedding-3-small"``.
    """

    name: str
    dimensions: int

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """An ``(len(texts), dimensions)`` float32 array, rows of unit norm."""

    def embed_one(self, text: str) -> npt.NDArray[np.float32]:
        """One ``(dimensions,)`` vector."""
        row: npt.NDArray[np.float32] = self.embed([text])[0]
        return row

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """A question's ``(dimensions,)`` vector, to search the vectors of :meth:`embed` with. The same as
        :meth:`embed_one` but for models trained with a role prefix (E5's ``query:``/``passage:``)."""
        return self.embed_one(text)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (HTTP clients, caches)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dimensions={self.dimensions})"
