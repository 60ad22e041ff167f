"""With no model configured, `kg ask` and `/v1/ask` answer from retrieval alone, cited and marked."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kgservice.answer.grounded import NOT_IN_GRAPH_EN
from kgservice.cli.app import app

GOOD = "#u1 {cat} [belongs to] {mammal}\n#u2 {mammal} [has] {fur}\n"


def test_kg_ask_without_a_model_answers_from_retrieval(tmp_path, monkeypatch):
    monkeypatch.delenv("KG_LLM_MODEL", raising=False)
    monkeypatch.delenv("KG_CONFIG", raising=False)
    f = tmp_path / "a.units"
    f.write_text(GOOD, "utf-8")
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    runner = CliRunner()
    assert runner.invoke(app, [*base, "ingest", str(f)]).exit_code == 0
    res = runner.invoke(app, [*base, "ask", "What does a mammal have?"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "no model configured" in text and "KG_LLM_MODEL" in text
    assert "Mammal has fur. [u2]" in text
    data = json.loads(runner.invoke(app, [*base, "ask", "What does a mammal have?", "--json"]).stdout)
    assert data["found"] is True and "u2" in data["cited"] and data["llm"]["calls"] == 0
    assert any("no model configured" in n for n in data["notes"])
    # a question that names nothing in the graph and shares no word with its units: "not in
    # the graph", not the units nearest its vector (it got three unrelated ones before)
    data = json.loads(runner.invoke(app, [*base, "ask", "What is the weather tomorrow?", "--json"]).stdout)
    assert data["found"] is False and data["cited"] == [] and data["answer"] == NOT_IN_GRAPH_EN


def test_rest_ask_without_a_model_is_200_and_cited(tmp_path):
    from fastapi.testclient import TestClient

    from kgservice.config import Settings
    from kgservice.notation import parse_units
    from kgservice.server.app import ServeOptions, create_app
    from kgservice.service import KnowledgeBase

    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:256", rate_limit=0.0)
    assert settings.llm_model == "kgoffline/scripted" and not settings.llm_model_chosen
    kb = KnowledgeBase(settings)
    try:
        kb.ingest_units(parse_units(GOOD, kb.lexicon, doc="a.units"))
        application = create_app(settings, ServeOptions(kb=kb))
        key = application.state.ctx.keys().create("r", "reader")[0]
        with TestClient(application, base_url="http://127.0.0.1") as c:
            r = c.post("/v1/ask", json={"question": "What does a mammal have?"},
                       headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 200, r.text
        assert r.json()["found"] is True and "u2" in r.json()["cited"]
    finally:
        kb.close()


def test_version_and_stats_without_a_store(tmp_path, monkeypatch):
    runner = CliRunner()
    v = runner.invoke(app, ["--version"])
    assert v.exit_code == 0 and v.stdout.startswith("kgservice ")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KG_DATA_DIR", raising=False)
    monkeypatch.delenv("KG_CONFIG", raising=False)
    res = runner.invoke(app, ["stats"])
    assert res.exit_code == 2 and "no knowledge store at .kg" in " ".join(res.output.split())
    assert not (tmp_path / ".kg").exists()


@pytest.mark.parametrize("command", [["ask", "What causes rain?"], ["search", "rain"], ["expand", "rain"],
                                     ["history"], ["export"], ["docs", "list"], ["jobs", "list"], ["doctor"],
                                     ["dump", "out.kgdump"], ["forget", "notes.md"]])
def test_a_read_of_a_folder_with_no_store_is_refused_not_made(command, tmp_path, monkeypatch):
    """A mistyped --data-dir used to make an empty store there and answer from it ("The graph has
    no information ...", exit 0), which reads as if the right store had been searched."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KG_CONFIG", raising=False)
    typo = tmp_path / "knowldge"
    res = CliRunner().invoke(app, ["--data-dir", str(typo), "--embedder", "hash:64", *command])
    assert res.exit_code == 2, res.output
    assert f"no knowledge store at {typo}" in "".join(res.output.split("\n"))
    assert not typo.exists()


def test_the_same_reads_work_once_a_store_is_there(tmp_path):
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    assert runner.invoke(app, [*base, "init"]).exit_code == 0
    for command in (["history"], ["stats"], ["docs", "list"]):
        res = runner.invoke(app, [*base, *command])
        assert res.exit_code == 0, (command, res.output)


def test_text_ingest_without_a_model_is_a_configuration_error(tmp_path, monkeypatch):
    monkeypatch.delenv("KG_LLM_MODEL", raising=False)
    monkeypatch.delenv("KG_CONFIG", raising=False)
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nCats are mammals.\n", "utf-8")
    res = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64", "ingest", str(notes)])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "none is configured" in text and "KG_LLM_MODEL" in text and "notes.md" in text
