from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kg.embeddings import Embedder, HashingEmbedder, make_embedder
from kg.embeddings.wordllama import WordLlamaEmbedder
from kg.errors import ConfigError, EmbeddingError
from kg.settings import EmbedderSettings
from kg.testing.scripted_llm import Fault, ScriptedLLMServer


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Refuse every outbound connection except to localhost (monkeypatches sockets, not any client)."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else str(address)
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise OSError(f"network disabled in tests: {address!r}")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: (_ for _ in ()).throw(OSError("no net")))
    yield


def test_wordllama_offline(no_network: None) -> None:
    emb = make_embedder(EmbedderSettings())
    assert isinstance(emb, Embedder) and emb.dimensions == 256 and emb.name.startswith("wordllama:")
    vectors = emb.embed([
        "The cat sat on the mat.",
        "A cat is sitting on a rug.",
        "Quarterly revenue grew by five percent.",
    ])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 256)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    one = emb.embed_one("The cat sat on the mat.")
    assert one.shape == (256,) and np.allclose(one, vectors[0], atol=1e-6)
    assert emb.embed([]).shape == (0, 256)
    empty = emb.embed([""])
    assert not np.isnan(empty).any()


def test_wordllama_batches_by_length_and_returns_the_input_order(no_network: None) -> None:
    """Texts are embedded sorted by length (less padding); each row must still be its own text's vector."""
    texts = ["A much longer sentence about the river that runs through the old town in spring.", "Short.",
             "", "Paris is the capital of France.", "x " * 400, "Quarterly revenue grew."]
    together = WordLlamaEmbedder(batch_size=2).embed(texts)
    alone = np.stack([WordLlamaEmbedder(batch_size=2).embed([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-6)
    assert len({tuple(np.round(v, 4)) for v in together}) == len(texts)


def test_hashing_is_deterministic_and_normalised() -> None:
    a = HashingEmbedder(64).embed(["graph database", "知识图谱", "banana"])
    b = HashingEmbedder(64).embed(["graph database", "知识图谱", "banana"])
    assert np.array_equal(a, b) and a.shape == (3, 64)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert make_embedder(EmbedderSettings(provider="hash", dimensions=32)).dimensions == 32


def test_openai_embedder_against_scripted_server(tmp_path: Path) -> None:
    with ScriptedLLMServer(embedding_dimensions=48) as server:
        settings = EmbedderSettings(provider="openai", base_url=server.base_url, model="emb-model",
                                    api_key="sk-emb", dimensions=48)
        emb = make_embedder(settings, cache_dir=tmp_path)
        texts = [f"text number {i}" for i in range(5)]
        vectors = emb.embed(texts)
        assert vectors.shape == (5, 48) and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        assert np.allclose(vectors, HashingEmbedder(48).embed(texts), atol=1e-6)
        (req,) = server.requests
        assert req.body["input"] == texts and req.body["dimensions"] == 48
        assert req.body["model"] == "emb-model"
        # cached per text: only the new text is requested
        again = emb.embed([*texts, "a new text"])
        assert np.allclose(again[:5], vectors) and len(server.requests) == 2
        assert server.requests[1].body["input"] == ["a new text"]
        emb.close()


def test_openai_embedder_batches_and_retries(tmp_path: Path) -> None:
    from kg.embeddings.openai import OpenAIEmbedder

    with ScriptedLLMServer(embedding_dimensions=16) as server:
        server.script("embeddings", Fault.server_error(503), Fault.rate_limit(retry_after=0), "ok")
        emb = OpenAIEmbedder(EmbedderSettings(provider="openai", base_url=server.base_url, model="m"),
                             batch_size=4, base_backoff_s=0.01, max_backoff_s=0.02)
        vectors = emb.embed([f"t{i}" for i in range(10)])
        assert vectors.shape == (10, 16) and emb.dimensions == 16
        assert [r.status for r in server.requests] == [503, 429, 200, 200, 200]
        emb.close()


def test_openai_embedder_gives_up(tmp_path: Path) -> None:
    from kg.embeddings.openai import OpenAIEmbedder

    with ScriptedLLMServer() as server:
        server.script("embeddings", Fault.server_error(500))
        emb = OpenAIEmbedder(EmbedderSettings(provider="openai", base_url=server.base_url),
                             max_retries=1, base_backoff_s=0.01)
        with pytest.raises(EmbeddingError, match="2 attempt"):
            emb.embed(["x"])
        emb.close()


def test_factory_errors() -> None:
    with pytest.raises(ConfigError, match="STRATA_EMBEDDING_BASE_URL"):
        make_embedder(EmbedderSettings(provider="openai"))
    with pytest.raises(ConfigError, match="STRATA_EMBEDDING_MODEL"):
        make_embedder(EmbedderSettings(provider="sentence-transformers"))
