"""Embedders behind one interface (:class:`Embedder`): wordllama (offline default), E5 (offline, multilingual,
the strongest here), MiniLM (offline, optional model package), OpenAI-compatible, sentence-transformers
(optional extra) and a deterministic hashing embedder for tests.

Example::

    from kg.embeddings import make_embedder
    embedder = make_embedder(settings.embedder, cache_dir=settings.cache_dir)
    vectors = embedder.embed(["a text", "another"])   # float32 (2, embedder.dimensions), unit rows
"""

from __future__ import annotations

from kg.embeddings.base import Embedder, l2_normalise
from kg.embeddings.factory import make_embedder
from kg.embeddings.hashing import HashingEmbedder

__all__ = ["Embedder", "HashingEmbedder", "l2_normalise", "make_embedder"]
