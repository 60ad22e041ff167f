"""The eval scripts of the answer-shaped ranking and the extractors' coverage: their examples
(worked out by hand in the docstrings), and the leave-one-set-out verdict on hand-made
rankings."""

from __future__ import annotations

import doctest

import pytest

from scripts.eval import bridge_edges, loso, run, scaled_set
from scripts.eval.defaults_rule import FULL


@pytest.mark.parametrize("module", [bridge_edges, loso, run, scaled_set])
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


def _set_files(tmp_path, question):
    """Two ``run.py --json`` files, sets s1 and s2, of four questions each (``question(i)``)."""
    import json

    files = []
    for name in ("s1", "s2"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"set": name, "per_question": [question(i) for i in range(4)]}))
        files.append(str(path))
    return files


def test_loso_variant_is_measured_against_the_full_retrieval(tmp_path, capsys):
    # a variant row "v" finds the gold passage at rank 1 on every question where the full
    # retrieval has it at rank 3: with it +100 (R@2) + 0 (R@5) per question -> +100 everywhere
    files = _set_files(tmp_path, lambda i: {"type": "bridge", "gold": ["p"],
                                            "rankings": {FULL: ["a", "b", "p"], "v": ["p", "a", "b"]}})
    assert loso.main([*files, "--variant", "v better=v"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| v better |"))
    assert "| +100.0 / +100.0 / +100.0 | +100.0 / +100.0 / +100.0 |" in row
    assert row.endswith("| halves: keep; whole sets: keep |")


def test_loso_reads_a_name_or_a_row_holding_an_equals_sign_and_refuses_a_row_no_file_has(tmp_path, capsys):
    # split at the first "=", "better=yes=v (x=2)" named the component "better" with the row
    # "yes=v (x=2)", which no file has: the component was silently left out and the run
    # exited 0; a row no file has (a typo) was left out the same way
    files = _set_files(tmp_path, lambda i: {"type": "bridge", "gold": ["p"],
                                            "rankings": {FULL: ["a", "b", "p"], "v (x=2)": ["p", "a", "b"]}})
    assert loso.main([*files, "--only-given", "--variant", "better=yes=v (x=2)"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| better=yes |"))
    assert row.endswith("| halves: keep; whole sets: keep |")
    assert loso.main([*files, "--only-given", "--component", "x=no such row"]) == 2
    err = capsys.readouterr().err
    assert "--component 'x=no such row'" in err and "v (x=2)" in err


def test_loso_pair_measures_a_component_between_any_two_rows(tmp_path, capsys):
    # "bare + c" finds the gold passage at rank 1 on the first three questions of each set and
    # misses it on the fourth, where "bare" has it at rank 4: top 2 better on 3, worse on none;
    # top 5 better on 3, worse on 1 (p = 2 * 4/16 = 0.625). Help per question: R@2 (3 x 100) +
    # R@5 (3 x 100 - 100) = 500 over 4 questions = +125 whole; even half (q0, q2) +200; odd half
    # (q1: +200, q3: -100) +50. The full retrieval is not in the files: only the pair is measured
    def q(i):
        hit, miss = ["p", "a", "b", "c", "d"], ["a", "b", "c", "p", "d"]
        return {"type": "bridge", "gold": ["p"],
                "rankings": {"bare + c": hit if i < 3 else ["a", "b", "c", "d", "e"], "bare": miss if i == 3 else ["x"]}}
    files = _set_files(tmp_path, q)
    assert loso.main([*files, "--only-given", "--pair", "c added=bare + c || bare"]) == 0
    out = capsys.readouterr().out.splitlines()
    row = next(line for line in out if line.startswith("| c added | +"))
    assert "| +125.0 / +200.0 / +50.0 | +125.0 / +200.0 / +50.0 |" in row
    assert row.endswith("| halves: keep; whole sets: keep |")
    cells = next(line for line in out if line.startswith("| c added | 3 "))
    assert cells == "| c added | 3 / 1 / 0 (p 0.25); 3 / 0 / 1 (p 0.62) | 3 / 1 / 0 (p 0.25); 3 / 0 / 1 (p 0.62) |"
    assert not any(line.startswith("| lexical seeds") for line in out)
    assert loso.main([*files, "--pair", "no separator=bare + c"]) == 2


def test_loso_group_holds_out_a_whole_question_set(tmp_path, capsys):
    # m1, m2 share questions (group), h1 is another question set: the component helps on the
    # group's two graphs (+200 per question) and hurts on h1 (-200). Holding out the group it is
    # chosen on h1 -> not chosen; holding out h1 it is chosen on the group and h1 does not
    # confirm it -> the simpler setting
    import json

    def write(name, helps):
        q = _q(["p"], ["p", "a"], ["a", "b"]) if helps else _q(["p"], ["a", "b"], ["p", "a"])
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"set": name, "per_question": [q for _ in range(4)]}))
        return str(path)
    files = [write("m1", True), write("m2", True), write("h1", False)]
    assert loso.main([*files, "--only-given", "--component", "x=no x", "--group", "m1,m2"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| x |"))
    assert row.endswith("| halves: simpler; whole sets: simpler; question sets: simpler |")
    # no --group: the verdict column is as before
    assert loso.main([*files, "--only-given", "--component", "x=no x"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| x |"))
    assert row.endswith("| halves: simpler; whole sets: simpler |")
    # a group naming a set no file holds: exit 2, naming it and the sets there are
    assert loso.main([*files, "--group", "m1,nosuch"]) == 2
    err = capsys.readouterr().err
    assert "nosuch" in err and "m1, m2, h1" in err


def test_loso_group_keeps_a_component_that_helps_every_question_set():
    sets = [{"per_question": [_q(["p"], ["p", "a"], ["a", "b"]) for _ in range(4)]} for _ in range(3)]
    rows = loso.table(sets, ["m1", "m2", "h1"], {"x": [(FULL, "no x")]}, [[0, 1], [2]])
    assert rows[-1].endswith("| halves: keep; whole sets: keep; question sets: keep |")
