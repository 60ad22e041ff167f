"""The examples in the docstrings of the document-reading helpers: cutting lines and snippets
from a split text, the heading above a line, and the bounded cache of split texts."""

from __future__ import annotations

import doctest

import pytest

from kgservice.lifecycle import model, place, rows


@pytest.mark.parametrize("module", [model, place, rows])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
