"""Fixtures shared by the eval harness tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scripts.eval import harness
from scripts.eval.dataset import load
from scripts.eval.harness import build

TINY = Path(__file__).with_name("tiny.json")


@pytest.fixture(scope="module")
def tiny_ctx(tmp_path_factory):
    """The tiny set built once per test module (hash embedder, no model), closed after it."""
    ctx = build(load(TINY), "hash:64", workdir=tmp_path_factory.mktemp("tiny"), log=lambda m: None)
    yield ctx
    ctx.kb.close()


@pytest.fixture()
def hash_built(tmp_path, monkeypatch):
    """Every ``harness.build`` of the test builds with the hash embedder under ``tmp_path/store``
    (no download, no model), for an eval CLI that builds its set file itself; the contexts
    built, closed after the test."""
    built: list[Any] = []
    real = harness.build

    def hashed(ds: Any, *a: Any, **kw: Any) -> Any:
        ctx = real(ds, "hash:64", workdir=tmp_path / "store", log=lambda m: None)
        built.append(ctx)
        return ctx

    monkeypatch.setattr(harness, "build", hashed)
    yield built
    for ctx in built:
        ctx.kb.close()
