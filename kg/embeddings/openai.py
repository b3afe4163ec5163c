"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint: batched, retried, cached per text.

Example::

    emb = OpenAIEmbedder(EmbedderSettings(provider="openai", base_url="https://api.openai.com/v1",
                                          model="text-embedding-3-small", api_key=key, dimensions=512),
                         cache_dir=Path("~/.cache/strata").expanduser())
    vectors = emb.embed(["first text", "second text"])   # (2, 512) float32, unit rows
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import openai

from kg.embeddings.base import Embedder, l2_normalise
from kg.errors import ConfigError, EmbeddingError
from kg.settings import EmbedderSettings
from kg.shared.concurrency import shared_limit
from kg.shared.response_cache import ResponseCache, cache_key
from kg.shared.retrying import RetryPolicy, retry_sync

__all__ = ["OpenAIEmbedder"]

log = logging.getLogger(__name__)

DEFAULT_MODEL = "text-embedding-3-small"


class OpenAIEmbedder(Embedder):
    """``POST {base_url}/embeddings`` in batches of ``batch_size``; vectors cached in SQLite per text.

    ``dimensions`` comes from the settings (and is sent as the ``dimensions`` parameter); when unset it is
    learnt from the first response (or from a one-text probe when read before any call). Requests in flight
    are limited per endpoint (``settings.max_concurrency``), together with any chat client of that endpoint.
    """

    def __init__(
        self,
        settings: EmbedderSettings,
        *,
        cache_dir: Path | None = None,
        batch_size: int = 128,
        timeout_s: float = 60.0,
        max_retries: int = 5,
        base_backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
    ) -> None:
        if not settings.base_url:
            raise ConfigError(
                "the openai embedder needs an endpoint: "
                "set STRATA_EMBEDDING_BASE_URL (or STRATA_LLM_BASE_URL)"
            )
        self.base_url = settings.base_url
        self.model = settings.model or DEFAULT_MODEL
        self.requested_dimensions = settings.dimensions
        self._dimensions: int | None = settings.dimensions
        self.name = f"openai:{self.model}"
        self.batch_size = batch_size
        self.policy = RetryPolicy(max_retries=max_retries, base_backoff_s=base_backoff_s,
                                  max_backoff_s=max_backoff_s)
        self.limit = shared_limit(self.base_url, settings.max_concurrency)
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=settings.api_key.get_secret_value() or "not-needed",
            timeout=timeout_s,
            max_retries=0,
        )
        self.cache: ResponseCache | None = None
        if cache_dir is not None:
            self.cache = ResponseCache.named(Path(cache_dir), "embeddings")
        self.calls = 0

    @property
    def dimensions(self) -> int:  # type: ignore[override]
        if self._dimensions is None:
            self.embed(["dimension probe"])
        assert self._dimensions is not None
        return self._dimensions

    def _key(self, text: str) -> str:
        return cache_key({"endpoint": self.base_url, "model": self.model,
                          "dimensions": self.requested_dimensions, "text": text})

    def _request(self, batch: list[str]) -> list[list[float]]:
        kwargs: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self.requested_dimensions is not None:
            kwargs["dimensions"] = self.requested_dimensions

        def attempt() -> Any:
            with self.limit.acquire():
                return self._client.embeddings.create(**kwargs)

        response = retry_sync(attempt, self.policy, what=f"embeddings ({self.model})",
                              wrap=EmbeddingError, exhausted=EmbeddingError)
        self.calls += 1
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise EmbeddingError(
                f"embeddings ({self.model}): sent {len(batch)} texts, got {len(data)} vectors"
            )
        return [list(d.embedding) for d in data]

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows: list[npt.NDArray[np.float32] | None] = [None] * len(texts)
        missing: list[int] = []
        for i, text in enumerate(texts):
            blob = self.cache.get_bytes(self._key(text)) if self.cache is not None else None
            if blob is not None:
                rows[i] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
            else:
                missing.append(i)
        for start in range(0, len(missing), self.batch_size):
            idx = missing[start:start + self.batch_size]
            vectors = l2_normalise(self._request([texts[i] for i in idx]))
            for i, vec in zip(idx, vectors, strict=True):
                rows[i] = vec
                if self.cache is not None:
                    self.cache.put(self._key(texts[i]), vec.astype("<f4").tobytes())
        if not texts:
            return np.zeros((0, self._dimensions or 0), dtype=np.float32)
        out = np.vstack([r for r in rows if r is not None]).astype(np.float32)
        if self._dimensions is None:
            self._dimensions = int(out.shape[1])
        elif out.shape[1] != self._dimensions:
            raise EmbeddingError(f"embeddings ({self.model}): expected {self._dimensions} dims, "
                                 f"got {out.shape[1]}")
        return out

    def close(self) -> None:
        self._client.close()
        if self.cache is not None:
            self.cache.close()
