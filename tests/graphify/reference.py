"""The reference graphify (graphifyy 0.9.96) in its own venv, for differential and contract tests.

graphifyy installs a ``graphify`` console script and a top-level ``graphify`` package, both
of which our distribution provides too; installed side by side, whichever was installed last
silently owns ``bin/graphify`` and ``python -m graphify``. So the reference never goes into
the project's environment: it lives in a venv under a stable cache path
(``~/.cache/kgservice/graphify-ref-0.9.96``, or ``$KG_GRAPHIFY_REF_DIR``), created once per
machine from the package registry, next to its sdist (whose ``tests/`` we run against our
implementation; third-party code, fetched at test time, never committed).

Use from tests::

    from tests.graphify.reference import reference_python, reference_graphify, sdist_dir
    py = reference_python()          # the venv's python (graphify + graphify.serve's MCP server), or None

``python -m tests.graphify.reference`` builds the cache and prints the python path.
Missing network -> ``None`` (callers skip), unless ``KG_REQUIRE_GRAPHIFY_REF=1`` (CI), where
a failure to build raises.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tarfile
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

VERSION = "0.9.96"
PACKAGE = "graphifyy"
# the `mcp` extra: graphify.serve's MCP server, for the MCP tool-schema contract test
SPEC = f"{PACKAGE}[mcp]=={VERSION}"
# extra packages the reference venv needs to run graphify's own test files
TEST_DEPS = ("pytest>=8",)


class ReferenceUnavailable(RuntimeError):
    """The reference venv or sdist could not be built (usually: no registry access)."""


def cache_dir() -> Path:
    env = os.environ.get("KG_GRAPHIFY_REF_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "kgservice" / f"graphify-ref-{VERSION}"


def required() -> bool:
    return os.environ.get("KG_REQUIRE_GRAPHIFY_REF", "") not in ("", "0")


@contextmanager
def _locked(root: Path):
    """One builder per machine: parallel test sessions wait instead of racing pip."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise ReferenceUnavailable(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")


def _venv() -> Path:
    return cache_dir() / "venv"


def build_venv() -> Path:
    """Create (once) the venv with ``SPEC`` and the test deps; return its python. A venv
    built for another spec is completed in place (pip only adds what is missing)."""
    root = cache_dir()
    venv = _venv()
    py = venv / "bin" / "python"
    done = venv / ".complete"
    want = " ".join([SPEC, *TEST_DEPS])
    if done.exists() and done.read_text() == want:
        return py
    with _locked(root):
        if done.exists() and done.read_text() == want:
            return py
        if not py.exists():
            shutil.rmtree(venv, ignore_errors=True)
            _run([sys.executable, "-m", "venv", str(venv)])
        _run([str(py), "-m", "pip", "install", "-q", SPEC, *TEST_DEPS])
        done.write_text(want)
    return py


def build_sdist() -> Path:
    """Download and unpack (once) graphifyy's sdist; return its top directory (holds ``tests/``)."""
    root = cache_dir()
    top = root / "sdist" / f"{PACKAGE}-{VERSION}"
    done = root / "sdist" / ".complete"
    if done.exists():
        return top
    with _locked(root):
        if done.exists():
            return top
        dl = root / "sdist"
        shutil.rmtree(dl, ignore_errors=True)
        dl.mkdir(parents=True)
        _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
              "-d", str(dl), f"{PACKAGE}=={VERSION}"])
        archive = next(dl.glob(f"{PACKAGE}-{VERSION}.tar.gz"))
        with tarfile.open(archive) as tf:
            tf.extractall(dl, filter="data")
        done.write_text(VERSION)
    return top


@lru_cache(maxsize=1)
def _python_or_error() -> tuple[Path | None, str]:
    try:
        return build_venv(), ""
    except (ReferenceUnavailable, OSError, subprocess.SubprocessError) as exc:
        if required():
            raise
        return None, str(exc)


def reference_python() -> Path | None:
    """The reference venv's python (``import graphify`` there is graphifyy 0.9.96), or None."""
    return _python_or_error()[0]


def reference_graphify() -> Path | None:
    """The reference ``graphify`` console script, or None."""
    py = reference_python()
    return py.parent / "graphify" if py else None


def unavailable_reason() -> str:
    return _python_or_error()[1]


@lru_cache(maxsize=1)
def sdist_dir() -> Path | None:
    """graphifyy's unpacked sdist (``tests/`` inside), or None when it cannot be fetched."""
    try:
        return build_sdist()
    except (ReferenceUnavailable, OSError, subprocess.SubprocessError, StopIteration):
        if required():
            raise
        return None


def reference_env(home: Path | None = None) -> dict[str, str]:
    """An environment for running the reference: no project on PYTHONPATH, no GRAPHIFY_* leaks."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GRAPHIFY") and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    if home is not None:
        env["HOME"] = str(home)
    return env


if __name__ == "__main__":
    print(build_venv())
    print(build_sdist())
