"""A config file's values have their settings' types: a wrong one is exit 2 naming the file and
the setting. Before, ``embedder = 5`` ran until the embedder was built and failed as "internal
error, please report it (AttributeError ...)", exit 1; ``llm_timeout = "soon"`` and
``allowed_hosts = "kg.internal"`` (read letter by letter) were taken silently."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.config import ConfigError, load_settings


@pytest.mark.parametrize("line, message", [
    ('embedder = 5', "embedder must be a string, got 5"),
    ('llm_timeout = "soon"', "llm_timeout must be a number, got 'soon'"),
    ('max_hops = 2.5', "max_hops must be a whole number, got 2.5"),
    ('max_hops = true', "max_hops must be a whole number, got True"),
    ('allowed_hosts = "kg.internal"', "allowed_hosts must be a list of strings, got 'kg.internal'"),
    ('lexicon_files = "mine.json"', "lexicon_files must be a list of paths, got 'mine.json'"),
    ('tau = {synonym = "high"}', "tau must be a table of numbers"),
    ('qdrant_shards = "two"', "qdrant_shards must be a whole number, got 'two'"),
    ('read_only = "yes"', "read_only must be true or false"),
])
def test_a_wrong_type_names_the_file_and_the_setting(tmp_path, line, message):
    cfg = tmp_path / "kg.toml"
    cfg.write_text(line + "\n", "utf-8")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={})
    assert str(err.value).startswith(f"{cfg}: {message}")


def test_right_types_load(tmp_path):
    cfg = tmp_path / "kg.toml"
    cfg.write_text('llm_timeout = 60\nepsilon = 0.1\nmax_hops = 2\nallowed_hosts = ["kg.internal"]\n'
                   'neo4j_vector_candidates = 50\nspread_seed_backflow = true\ntau = {synonym = 0.9}\n'
                   'lexicon_files = []\ndata_dir = "somewhere"\n', "utf-8")
    s = load_settings(cfg, env={})
    assert (s.llm_timeout, s.max_hops, s.allowed_hosts, s.neo4j_vector_candidates) == (60, 2, ("kg.internal",), 50)
    assert s.spread_seed_backflow is True and s.tau == {"synonym": 0.9} and str(s.data_dir) == "somewhere"


def test_the_cli_refuses_it_with_exit_2_and_no_internal_error(tmp_path):
    cfg = tmp_path / "kg.toml"
    cfg.write_text("embedder = 5\n", "utf-8")
    data = tmp_path / "kg"
    runner = CliRunner()
    assert runner.invoke(app, ["--data-dir", str(data), "--embedder", "hash:64", "init"]).exit_code == 0
    r = runner.invoke(app, ["--config", str(cfg), "--data-dir", str(data), "search", "tea"])
    assert r.exit_code == 2, r.output
    assert f"{cfg}: embedder must be a string, got 5" in r.output and "internal error" not in r.output


@pytest.mark.parametrize("command", [["stats"], ["ask", "x"], ["init"]])
def test_a_data_dir_that_is_a_file_is_exit_2_naming_it(tmp_path, command):
    # it was exit 1, "cannot create the store directory afile/graph: Not a directory", for reads too
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n", "utf-8")
    r = CliRunner().invoke(app, ["--data-dir", str(afile), "--embedder", "hash:64", *command])
    assert r.exit_code == 2, r.output
    assert f"--data-dir {str(afile)!r} is a file, not a folder" in r.output
    with pytest.raises(ConfigError, match="KG_DATA_DIR .* is a file"):
        load_settings(None, env={"KG_DATA_DIR": str(afile)})
    assert afile.read_text("utf-8") == "not a folder\n"
