"""The data directory's own ``kg.toml`` (the template ``kg init`` writes, "env vars override
these") is read by every command on that data directory. Before, it was read only when named by
``--config`` / ``KG_CONFIG``: a setting uncommented in it changed nothing, silently."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.config import ConfigError, load_settings


def test_kg_init_then_an_uncommented_setting_is_in_force(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("KG_DATA_DIR", "KG_CONFIG", "KG_LLM_MODEL", "KG_EPSILON"):
        monkeypatch.delenv(var, raising=False)
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0
    cfg = tmp_path / ".kg" / "kg.toml"
    assert load_settings(None, env={}).llm_model_chosen is False  # the template is all comments
    cfg.write_text(cfg.read_text("utf-8").replace('# llm_model = "kgoffline/scripted"', 'llm_model = "kgoffline/rules"')
                   .replace("# epsilon = 0.05", "epsilon = 0.1"), "utf-8")
    s = load_settings(None, env={})
    assert (s.llm_model, s.llm_model_chosen, s.epsilon) == ("kgoffline/rules", True, 0.1)
    assert load_settings(None, env={"KG_EPSILON": "0.2"}).epsilon == 0.2  # the environment overrides it


def test_the_data_dir_named_by_flag_or_env_is_the_one_read(tmp_path):
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "kg.toml").write_text("max_hops = 2\n", "utf-8")
    assert load_settings(None, env={"KG_DATA_DIR": str(tmp_path / "kb")}).max_hops == 2
    assert load_settings(None, env={}, flags={"data_dir": tmp_path / "kb"}).max_hops == 2
    other = tmp_path / "other.toml"
    other.write_text("epsilon = 0.3\n", "utf-8")  # a file named by --config is read instead of it
    s = load_settings(other, env={"KG_DATA_DIR": str(tmp_path / "kb")})
    assert (s.max_hops, s.epsilon) == (3, 0.3)


def test_its_errors_name_it_and_it_cannot_move_the_data_dir(tmp_path):
    (tmp_path / "kb").mkdir()
    cfg = tmp_path / "kb" / "kg.toml"
    cfg.write_text('max_hops = "two"\n', "utf-8")
    with pytest.raises(ConfigError, match="kg.toml: max_hops must be a whole number"):
        load_settings(None, env={"KG_DATA_DIR": str(tmp_path / "kb")})
    cfg.write_text('data_dir = "elsewhere"\n', "utf-8")
    with pytest.raises(ConfigError, match="data_dir cannot be set in the data directory's own kg.toml"):
        load_settings(None, env={"KG_DATA_DIR": str(tmp_path / "kb")})
