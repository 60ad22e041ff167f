"""Run the ``Examples`` in the package's docstrings (networkx style), so they cannot rot.

Every module under ``kgservice/`` whose source holds a ``>>>`` prompt is imported and its
doctests run; a module gains examples and is covered, with no list to update here.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "kgservice"
MODULES = sorted(
    ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
    for p in PACKAGE.rglob("*.py") if ">>> " in p.read_text("utf-8"))


def test_the_package_has_examples():
    # the pure core carries examples; a refactor that drops them all should be noticed
    assert {"kgservice.ids", "kgservice.notation.parser", "kgservice.families.lexicon",
            "kgservice.extraction.chunking", "kgservice.expansion.directed",
            "kgservice.expansion.spread", "kgservice.service"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_examples(name: str, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.attempted > 0, f"{name}: no example ran"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (see output above)"
