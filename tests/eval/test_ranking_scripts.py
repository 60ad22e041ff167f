"""The eval scripts of the answer-shaped ranking and the extractors' coverage: their examples
(worked out by hand in the docstrings), and the leave-one-set-out verdict on hand-made
rankings."""

from __future__ import annotations

import doctest

import pytest

from scripts.eval import bridge_edges, loso, scaled_set
from scripts.eval.defaults_rule import FULL


@pytest.mark.parametrize("module", [bridge_edges, loso, scaled_set])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def _q(gold, full, without):
    return {"type": "bridge", "gold": gold, "rankings": {FULL: full, "no x": without}}


def test_loso_keeps_a_component_that_helps_every_held_out_half():
    # two sets, four questions each: the full retrieval finds the gold passage at rank 1 where
    # the row without the component misses it, on every question -> help +200 on each half
    sets = [{"per_question": [_q(["p"], ["p", "a"], ["a", "b"]) for _ in range(4)]} for _ in range(2)]
    rows = loso.table(sets, ["s1", "s2"], {"x": [(FULL, "no x")]})
    assert rows[-1].endswith("| halves: keep; whole sets: keep |")
    # the component helps only on the first set's even questions: chosen when s2 is held out,
    # and not confirmed on s2's odd half -> the simpler setting
    s1 = {"per_question": [_q(["p"], ["p"], ["a"]) if i % 2 == 0 else _q(["p"], ["a"], ["a"]) for i in range(4)]}
    s2 = {"per_question": [_q(["p"], ["a"], ["a"]) for _ in range(4)]}
    rows = loso.table([s1, s2], ["s1", "s2"], {"x": [(FULL, "no x")]})
    # whole sets: chosen on s2 (help 0) -> dropped; chosen on s1 (+100) -> kept, s2 +0: simpler
    assert rows[-1].endswith("| halves: simpler; whole sets: simpler |")


def test_loso_variant_is_measured_against_the_full_retrieval(tmp_path, capsys):
    # a variant row "v" finds the gold passage at rank 1 on every question where the full
    # retrieval has it at rank 3: with it +100 (R@2) + 0 (R@5) per question -> +100 everywhere
    import json

    def q():
        return {"type": "bridge", "gold": ["p"], "rankings": {FULL: ["a", "b", "p"], "v": ["p", "a", "b"]}}
    files = []
    for name in ("s1", "s2"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"set": name, "per_question": [q() for _ in range(4)]}))
        files.append(str(path))
    assert loso.main([*files, "--variant", "v better=v"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| v better |"))
    assert "| +100.0 / +100.0 / +100.0 | +100.0 / +100.0 / +100.0 |" in row
    assert row.endswith("| halves: keep; whole sets: keep |")
