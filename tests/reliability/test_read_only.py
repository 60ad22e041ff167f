"""KG_READ_ONLY fails closed (issue 13: N13, N14, N15): strict boolean parsing, and every
write refused - cache clear, graphify save-result / reflect, text ingest before any LLM call."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.config import ConfigError, load_settings
from tests.contract.corpus import SMALL

ROOT_DEMO = __import__("pathlib").Path(__file__).resolve().parents[2] / "demo"


@pytest.mark.parametrize("value,expected", [("1", True), ("true", True), ("YES", True), ("on", True), ("On", True),
                                            ("0", False), ("false", False), ("No", False), ("off", False)])
def test_accepted_values(value, expected):
    assert load_settings(env={"KG_READ_ONLY": value}).read_only is expected


@pytest.mark.parametrize("value", [" 1", "1 ", "garbage", "enabled", "y", "2", "tru", "\t0"])
def test_unrecognised_values_are_config_errors(value):
    with pytest.raises(ConfigError, match="KG_READ_ONLY"):
        load_settings(env={"KG_READ_ONLY": value})


def test_toml_read_only_must_be_a_boolean(tmp_path):
    cfg = tmp_path / "kg.toml"
    cfg.write_text('read_only = "yes"\n', "utf-8")
    with pytest.raises(ConfigError, match="read_only must be true or false"):
        load_settings(cfg, env={})


@pytest.fixture()
def store(tmp_path):
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    f = tmp_path / "s.units"
    f.write_text(SMALL, "utf-8")
    assert runner.invoke(app, [*base, "ingest", str(f)]).exit_code == 0
    return runner, base, f


def _units(runner, base):
    return json.loads(runner.invoke(app, [*base, "stats", "--json"]).stdout)["units"]


@pytest.mark.parametrize("value", [" 1", "1 ", "garbage"])
def test_cli_refuses_to_start_on_an_unrecognised_value(store, value, tmp_path):
    runner, base, _ = store
    g = tmp_path / "g.units"
    g.write_text("#ro1 {a} [has] {b}\n", "utf-8")
    r = runner.invoke(app, [*base, "ingest", str(g)], env={"KG_READ_ONLY": value})
    assert r.exit_code == 2 and "KG_READ_ONLY" in r.stderr and "Traceback" not in r.output
    assert _units(runner, base) == 18  # nothing stored


def test_on_means_read_only(store, tmp_path):
    runner, base, _ = store
    g = tmp_path / "g.units"
    g.write_text("#ro1 {a} [has] {b}\n", "utf-8")
    r = runner.invoke(app, [*base, "ingest", str(g)], env={"KG_READ_ONLY": "on"})
    assert r.exit_code == 1 and "read-only" in r.stderr
    assert _units(runner, base) == 18


def test_cache_clear_refused(store):
    runner, base, _ = store
    r = runner.invoke(app, [*base, "ask", "What does smoking cause?"], env={"KG_LLM_MODEL": "kgoffline/rules"})
    assert r.exit_code == 0, r.output
    before = json.loads(runner.invoke(app, [*base, "cache", "stats", "--json"]).stdout)
    entries = sum(c["entries"] for c in before["caches"].values())
    assert entries > 0
    r = runner.invoke(app, [*base, "cache", "clear"], env={"KG_READ_ONLY": "1"})
    assert r.exit_code == 1 and "read-only" in r.stderr
    after = json.loads(runner.invoke(app, [*base, "cache", "stats", "--json"]).stdout)
    assert sum(c["entries"] for c in after["caches"].values()) == entries


def test_save_result_and_reflect_refused(store, tmp_path, monkeypatch):
    runner, base, _ = store
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, [*base, "export", "graphify-out/graph.json"]).exit_code == 0
    r = runner.invoke(app, [*base, "save-result", "--question", "Is X true?", "--answer", "Yes", "--nodes", "cat"],
                      env={"KG_READ_ONLY": "1"})
    assert r.exit_code == 1 and "read-only" in r.stderr
    assert not (tmp_path / "graphify-out" / "memory").exists()
    r = runner.invoke(app, [*base, "reflect"], env={"KG_READ_ONLY": "true"})
    assert r.exit_code == 1 and "read-only" in r.stderr
    assert not (tmp_path / "graphify-out" / "reflections").exists()
    # the standalone graphify entry point (no kg settings on the context) reads KG_READ_ONLY itself
    from kgservice.graphify.cli import save_result_cmd

    monkeypatch.setenv("KG_READ_ONLY", "yes")
    import typer
    with pytest.raises(typer.Exit) as ei:
        save_result_cmd(typer.Context(typer.main.get_command(app)), question="q", answer="a")
    assert ei.value.exit_code == 1
    assert not (tmp_path / "graphify-out" / "memory").exists()
    # a writer may still save
    monkeypatch.delenv("KG_READ_ONLY")
    r = runner.invoke(app, [*base, "save-result", "--question", "Is X true?", "--answer", "Yes"])
    assert r.exit_code == 0, r.output
    assert len(list((tmp_path / "graphify-out" / "memory").iterdir())) == 1


def test_ingest_text_refused_before_any_llm_call(store, monkeypatch):
    import litellm

    runner, base, _ = store
    calls = []

    def no_llm(*a, **kw):
        calls.append(kw.get("model"))
        raise AssertionError("the LLM was called")

    monkeypatch.setattr(litellm, "completion", no_llm)
    r = runner.invoke(app, [*base, "ingest", str(ROOT_DEMO / "texts" / "03_smoking.txt")],
                      env={"KG_READ_ONLY": "1", "KG_LLM_MODEL": "kgoffline/rules"})
    assert r.exit_code == 1 and "read-only" in r.stderr, r.output
    assert calls == []
    assert _units(runner, base) == 18


def test_graphify_script_save_result_and_reflect_refused(tmp_path):
    """The `graphify` console script (the drop-in, not `kg`) reads KG_READ_ONLY itself."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "KG_READ_ONLY": "on"}
    script = [sys.executable, "-m", "graphify"]
    for args in (["save-result", "--question", "q", "--answer", "a"], ["reflect"]):
        r = subprocess.run([*script, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 1 and "read-only" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "graphify-out").exists()
    r = subprocess.run([*script, "save-result", "--question", "q", "--answer", "a"], cwd=tmp_path,
                       env={**env, "KG_READ_ONLY": " 1"}, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "KG_READ_ONLY" in r.stderr  # not a boolean: a usage error, never writable
    assert not (tmp_path / "graphify-out").exists()
    r = subprocess.run([*script, "save-result", "--question", "q", "--answer", "a"], cwd=tmp_path,
                       env={**env, "KG_READ_ONLY": "off"}, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and len(list((tmp_path / "graphify-out" / "memory").iterdir())) == 1
