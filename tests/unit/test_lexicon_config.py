"""Predicate lexicon and settings: families, user extension, τ overrides, secret handling."""

from __future__ import annotations

import json
import os

import pytest

from kgservice.config import ConfigError, load_settings
from kgservice.families import Lexicon
from kgservice.families.lexicon import LexiconError


@pytest.mark.parametrize(
    "predicate, kind, base",
    [
        ("同义", "synonym", "同义"), ("Also Known As", "synonym", "同义"), ("aka", "synonym", "同义"),
        ("is a", "belongs_to", "属于"), ("属于", "belongs_to", "属于"), ("subclass of", "belongs_to", "属于"),
        ("has", "of", "的"), ("的", "of", "的"),
        ("causes", "content", "导致"), ("引起", "content", "导致"), ("造成", "content", "导致"),
        ("related to", "related_to", "相关于"), ("相关于", "related_to", "相关于"),
        ("replaced by", "superseded", "被取代"), ("narrows", "narrows", "派生"),
        ("orbits", "content", "orbit"),  # unknown predicate: its own content family, by base form
        ("orbited", "content", "orbit"), ("caused", "content", "导致"), ("was replaced by", "superseded", "被取代"),
    ],
)
def test_predicates_map_to_family_base(lexicon, predicate, kind, base):
    info = lexicon.resolve(predicate)
    assert (info.kind, info.base) == (kind, base)


def test_inverse_members_are_flagged(lexicon):
    assert lexicon.resolve("supersedes").inverse and lexicon.resolve("attribute of").inverse
    assert not lexicon.resolve("replaced by").inverse


def test_default_tau(lexicon):
    assert {k: lexicon.tau_of(k) for k in ("synonym", "belongs_to", "of", "content", "related_to")} == {
        "synonym": 0.9, "belongs_to": 0.7, "of": 0.5, "content": 0.3, "related_to": 0.2}


def test_spread_library_defaults_come_from_the_lexicon(lexicon):
    from kgservice.expansion import SpreadParams
    from kgservice.expansion import spread
    from kgservice.families import SPREAD_KINDS

    assert dict(SpreadParams().tau) == {k: lexicon.tau_of(k) for k in SPREAD_KINDS}
    assert not hasattr(spread, "DEFAULT_TAU")  # no second table to drift from lexicon.json
    a, b = SpreadParams(), SpreadParams()
    a.tau["content"] = 0.99  # type: ignore[index]  # each params object owns its copy
    assert b.tau["content"] == lexicon.tau_of("content")


def test_user_lexicon_extends_and_overrides(tmp_path):
    user = tmp_path / "lex.json"
    user.write_text(json.dumps({"kinds": {"synonym": {"members": ["idem"], "tau": 0.95}},
                                "content": {"families": {"治疗": ["treats", "cures"]}}}), "utf-8")
    lex = Lexicon.load([user], tau_overrides={"content": 0.4})
    assert lex.resolve("idem").kind == "synonym" and lex.tau_of("synonym") == 0.95
    assert (lex.resolve("cures").kind, lex.resolve("cures").base) == ("content", "治疗")
    assert lex.tau_of("content") == 0.4


def test_bad_user_lexicon_names_file_and_position(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"kinds": {', "utf-8")
    with pytest.raises(LexiconError, match=r"bad.json:1:\d+"):
        Lexicon.load([bad])
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"kinds": {"synonyms": {"members": []}}}', "utf-8")
    with pytest.raises(LexiconError, match="unknown family kind 'synonyms'"):
        Lexicon.load([wrong])


def test_settings_precedence_and_backend_inference(tmp_path):
    cfg = tmp_path / "kg.toml"
    cfg.write_text('data_dir = "from-file"\nepsilon = 0.1\n', "utf-8")
    s = load_settings(cfg, env={"KG_EPSILON": "0.2"})
    assert str(s.data_dir) == "from-file" and s.epsilon == 0.2 and s.backend == "embedded"
    s2 = load_settings(None, env={"KG_NEO4J_URI": "bolt://127.0.0.1:7687", "NEO4J_PASSWORD": "pw-secret"})
    assert s2.backend == "neo4j"
    assert "pw-secret" not in json.dumps(s2.public())


def test_spread_constraints_from_env(tmp_path):
    s = load_settings(None, env={"KG_SPREAD_MAX_FANOUT": "500", "KG_SPREAD_MAX_FIRE": "off"})
    assert (s.spread_max_fanout, s.spread_max_fire) == (500, None)
    assert load_settings(None, env={}).spread_max_fanout is None  # DESIGN §4.3 as written unless asked


def test_secret_in_world_readable_config_is_refused(tmp_path):
    cfg = tmp_path / "kg.toml"
    cfg.write_text('neo4j_password = "x"\n', "utf-8")
    os.chmod(cfg, 0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_settings(cfg, env={})
    os.chmod(cfg, 0o600)
    assert load_settings(cfg, env={}).neo4j_password == "x"


def test_config_errors_are_specific(tmp_path):
    cfg = tmp_path / "kg.toml"
    cfg.write_text('colour = "red"\n', "utf-8")
    with pytest.raises(ConfigError, match="unknown setting"):
        load_settings(cfg, env={})
    with pytest.raises(ConfigError, match="KG_MAX_HOPS"):
        load_settings(None, env={"KG_MAX_HOPS": "three"})
    with pytest.raises(ConfigError, match="KG_SPREAD_MAX_FANOUT"):
        load_settings(None, env={"KG_SPREAD_MAX_FANOUT": "many"})
    with pytest.raises(ConfigError, match="needs KG_NEO4J_URI"):
        load_settings(None, env={"KG_BACKEND": "neo4j"})


@pytest.mark.parametrize("kwargs, message", [
    ({"epsilon": 1.5}, "epsilon must be in (0, 1)"),
    ({"epsilon": 0.0}, "epsilon must be in (0, 1)"),
    ({"max_hops": 0}, "max_hops (K) must be 1..10"),
    ({"max_hops": 11}, "max_hops (K) must be 1..10"),
    ({"degree_damping": -0.1}, "degree_damping must be in [0, 2]"),
    ({"tau": {"superseded": 0.5}}, "tau given for 'superseded'"),
    ({"max_fire": 0}, "max_fire must be a positive number"),
])
def test_spread_params_refuse_out_of_range_values(kwargs, message):
    # These checks once sat after a `return` and never ran: an epsilon of 1.5 spread nothing silently.
    from kgservice.expansion import SpreadParams

    with pytest.raises(ValueError) as err:
        SpreadParams(**kwargs)
    assert message in str(err.value)


def test_kg_expand_names_a_bad_spread_parameter(tmp_path):
    from typer.testing import CliRunner

    from kgservice.cli.app import app
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

    kb = KnowledgeBase(Settings(data_dir=tmp_path / "kg"))
    kb.ingest_notation("{CPython} [is a] {interpreter}", embed=False)
    kb.close()
    r = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "expand", "CPython", "--mode", "spread",
                                 "--epsilon", "1.5"])
    assert r.exit_code == 2
    assert "epsilon must be in (0, 1), got 1.5" in r.output
