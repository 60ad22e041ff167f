"""The no-model answer's pure modules: their examples, worked out by hand in the docstrings
(the ranking's signals, the relevance floor's verdicts)."""

from __future__ import annotations

import doctest

import pytest

from kgservice.answer import floor, retrieval_only, shape


@pytest.mark.parametrize("module", [shape, floor, retrieval_only])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.failed == 0 and (module is retrieval_only or result.attempted > 0)
