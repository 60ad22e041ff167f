"""scripts/mypy_check.py: the per-file baseline only shrinks, strictly checked modules have none.

mypy itself is not run here (it takes a minute and .ci/run runs it); its output is given as text,
in the format mypy prints, and the expected verdicts are worked out by hand from it."""

from __future__ import annotations

import doctest
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("mypy_check", ROOT / "scripts" / "mypy_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mypy]\nfiles = ["pkg"]\n[[tool.mypy.overrides]]\nmodule = ["pkg.front"]\n'
        'disallow_untyped_defs = true\n', "utf-8")
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    monkeypatch.setattr(mod, "BASELINE", tmp_path / "scripts" / "baseline.json")
    strict = mod.strict_files
    monkeypatch.setattr(mod, "strict_files", lambda: strict(tmp_path / "pyproject.toml"))
    return mod


def _mypy_says(mod, monkeypatch, text: str, code: int = 1) -> None:
    monkeypatch.setattr(mod, "run_mypy", lambda: (code, text))


TODAY = """pkg/a.py:3: error: Incompatible types in assignment  [assignment]
pkg/a.py:3: note: a note is not an error
pkg/a.py:17:5: error: Missing type annotation  [var-annotated]
pkg/b.py:1: error: Name "x" is not defined  [name-defined]
"""


def test_the_doctests_of_the_script_pass():
    spec = importlib.util.spec_from_file_location("mypy_check_doc", ROOT / "scripts" / "mypy_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert doctest.testmod(mod).failed == 0


def test_a_file_over_its_baseline_fails_and_its_errors_are_shown(tmp_path, monkeypatch, capsys):
    mod = _load(tmp_path, monkeypatch)
    mod.BASELINE.write_text(json.dumps({"pkg/a.py": 2}), "utf-8")  # b.py has none allowed: 1 > 0
    _mypy_says(mod, monkeypatch, TODAY)
    assert mod.main([]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ['pkg/b.py:1: error: Name "x" is not defined  [name-defined]']
    assert "pkg/b.py: 1 errors, the baseline allows 0" in err


def test_fewer_errors_pass_with_a_reminder_and_update_only_lowers(tmp_path, monkeypatch, capsys):
    mod = _load(tmp_path, monkeypatch)
    mod.BASELINE.write_text(json.dumps({"pkg/a.py": 5, "pkg/b.py": 1, "pkg/gone.py": 4}), "utf-8")
    _mypy_says(mod, monkeypatch, TODAY)
    assert mod.main([]) == 0
    out, _ = capsys.readouterr()
    assert "pkg/a.py (2 < 5)" in out and "pkg/gone.py (0 < 4)" in out and "--update" in out
    assert mod.main(["--update"]) == 0
    assert json.loads(mod.BASELINE.read_text("utf-8")) == {"pkg/a.py": 2, "pkg/b.py": 1}


def test_update_does_not_raise_a_count_without_force(tmp_path, monkeypatch):
    mod = _load(tmp_path, monkeypatch)
    mod.BASELINE.write_text(json.dumps({"pkg/a.py": 1}), "utf-8")
    _mypy_says(mod, monkeypatch, TODAY)
    assert mod.main(["--update"]) == 1  # a.py 2 > 1 and b.py 1 > 0 stay failures
    assert json.loads(mod.BASELINE.read_text("utf-8")) == {"pkg/a.py": 1}
    assert mod.main(["--update", "--force"]) == 0
    assert json.loads(mod.BASELINE.read_text("utf-8")) == {"pkg/a.py": 2, "pkg/b.py": 1}


def test_a_strictly_checked_module_may_have_no_baseline(tmp_path, monkeypatch, capsys):
    mod = _load(tmp_path, monkeypatch)
    mod.BASELINE.write_text(json.dumps({"pkg/front.py": 1}), "utf-8")
    _mypy_says(mod, monkeypatch, "pkg/front.py:9: error: Function is missing a type annotation  [no-untyped-def]\n")
    assert mod.main([]) == 1
    assert "strictly checked" in capsys.readouterr().err
    assert mod.main(["--update", "--force"]) == 1
    assert json.loads(mod.BASELINE.read_text("utf-8")) == {"pkg/front.py": 1}  # not rewritten


def test_mypy_failing_before_any_error_is_not_a_pass(tmp_path, monkeypatch):
    mod = _load(tmp_path, monkeypatch)
    _mypy_says(mod, monkeypatch, "pyproject.toml: [mypy]: bad option\n", code=2)
    assert mod.main([]) == 2


def test_the_committed_config_checks_the_front_door_and_store_providers_strictly():
    spec = importlib.util.spec_from_file_location("mypy_check_cfg", ROOT / "scripts" / "mypy_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    strict = mod.strict_files(ROOT / "pyproject.toml")
    assert {"kgservice/service.py", "kgservice/stores/base.py", "kgservice/stores/neo4j/store.py",
            "kgservice/stores/embedded/store.py"} <= strict
    baseline = json.loads((ROOT / "scripts" / "mypy_baseline.json").read_text("utf-8"))
    assert not strict & set(baseline)
