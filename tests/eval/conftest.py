"""Fixtures shared by the eval harness tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.eval.dataset import load
from scripts.eval.harness import build

TINY = Path(__file__).with_name("tiny.json")


@pytest.fixture(scope="module")
def tiny_ctx(tmp_path_factory):
    """The tiny set built once per test module (hash embedder, no model), closed after it."""
    ctx = build(load(TINY), "hash:64", workdir=tmp_path_factory.mktemp("tiny"), log=lambda m: None)
    yield ctx
    ctx.kb.close()
