"""The `kg` CLI end to end on the embedded store: happy path, bad input, exit codes."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app

runner = CliRunner()
GOOD = "#u1 {cat} [belongs to] {mammal}\n#u2 {mammal} [has] {fur}\n#u3 {猫} [同义] {cat}\n"


@pytest.fixture
def kg(tmp_path):
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]

    def run(*args: str, code: int = 0):
        result = runner.invoke(app, [*base, *args])
        assert result.exit_code == code, result.output
        return result

    return run


def test_ingest_expand_export_stats(kg, tmp_path):
    f = tmp_path / "a.units"
    f.write_text(GOOD, "utf-8")
    rep = json.loads(kg("ingest", str(f), "--json").stdout)
    assert (rep["units_added"], rep["nodes_added"], rep["embedded_nodes"]) == (3, 4, 4)
    again = json.loads(kg("ingest", str(f), "--json").stdout)
    assert (again["units_added"], again["units_unchanged"]) == (0, 3)
    d = json.loads(kg("expand", "猫", "--json").stdout)
    assert sorted(d["units"]) == ["u1", "u2", "u3"]  # ≡ cat, cat belongs to mammal, mammal has fur sinks
    s = json.loads(kg("expand", "CAT", "--mode", "spread", "-k", "1", "--json").stdout)
    # cat: belongs_to mammal .7, synonym 猫 .9; the service damps hubs (lexicon: δ = 0.5) and cat
    # passes along 2 rows, so each carries 1/√2 of it
    assert {r["node"]: round(r["energy"], 9) for r in s["ranked"]} == {
        "cat": 1.0, "猫": round(0.9 / 2 ** 0.5, 9), "mammal": round(0.7 / 2 ** 0.5, 9)}
    # mammal has 2 relation edges (u2, u3): with --max-fanout 1 it receives energy but passes none on
    s = json.loads(kg("expand", "cat", "--mode", "spread", "--max-fanout", "1", "--json").stdout)
    assert s["params"]["max_fanout"] == 1
    assert {r["node"] for r in s["ranked"]} == {"cat", "猫", "mammal"}
    out = tmp_path / "graph.json"
    kg("export", str(out))
    assert len(json.loads(out.read_text("utf-8"))["units"]) == 3
    st = json.loads(kg("stats", "--json").stdout)
    assert (st["units"], st["nodes"], st["backend"]) == (3, 4, "embedded")


def test_expand_causal_prints_the_chains_with_their_units(kg, tmp_path):
    f = tmp_path / "c.units"
    f.write_text("#k1 {deforestation} [causes] {soil erosion}\n#k2 {soil erosion} [leads to] {crop failure}\n"
                 "#k3 {crop failure} [引起] {famine}\n#k4 {famine} [causes] {migration}\n"
                 "#k5 {soil erosion} [has] {gullies}\n", "utf-8")
    kg("ingest", str(f))
    d = json.loads(kg("expand", "Deforestation", "--mode", "causal", "--json").stdout)
    assert d["seeds"] == ["deforestation"] and d["max_hops"] == 3 and d["units"] == ["k1", "k2", "k3"]
    [r] = d["results"]
    # k5 (has) is no 导致 unit; k4 is a fourth hop
    assert r["ends"] == ["famine"] and [[h["unit"] for h in c] for c in r["chains"]] == [["k1", "k2", "k3"]]
    d4 = json.loads(kg("expand", "deforestation", "--mode", "causal", "-k", "4", "--json").stdout)
    assert d4["units"] == ["k1", "k2", "k3", "k4"] and d4["results"][0]["ends"] == ["migration"]
    text = kg("expand", "deforestation", "--mode", "causal").stdout
    assert "deforestation -#k1-> soil erosion -#k2-> crop failure -#k3-> famine" in text
    assert "--hops must be 1..10" in kg("expand", "deforestation", "--mode", "causal", "-k", "11", code=2).stderr


def test_bad_file_is_rejected_with_position_and_nothing_stored(kg, tmp_path):
    good = tmp_path / "good.units"
    good.write_text(GOOD, "utf-8")
    bad = tmp_path / "bad.units"
    bad.write_text("#x1 {dog} [is a] {mammal}\n#x2 {dog} [has]\n", "utf-8")
    r = kg("ingest", str(good), str(bad), code=2)
    assert f"{bad}:2:" in r.stderr and "expected at least one argument" in r.stderr
    st = json.loads(kg("stats", "--json").stdout)
    assert st["units"] == 0  # the good file was not stored either: one batch, all or nothing


def test_unknown_node_and_bad_mode(kg, tmp_path):
    f = tmp_path / "a.units"
    f.write_text(GOOD, "utf-8")
    kg("ingest", str(f))
    assert "no node 'dog'" in kg("expand", "dog", code=2).stderr
    assert "--mode must be" in kg("expand", "cat", "--mode", "sideways", code=2).stderr
    assert "no such file" in kg("ingest", str(tmp_path / "missing.units"), code=2).stderr


def test_every_command_has_help(kg):
    for cmd in ("init", "ingest", "expand", "export", "stats", "search"):
        assert "Usage" in kg(cmd, "--help").stdout


@pytest.mark.parametrize("cmd", [("ask",), ("ingest",), ("docs", "list"), ("docs",), ("workspaces", "delete")])
def test_help_shows_no_type_for_a_flag(kg, cmd):
    """typer's panel printed `--json <bool>`, which reads as an option taking a value."""
    rows = [" ".join(r.strip("│ ").split()) for r in kg(*cmd, "--help").stdout.splitlines()]
    assert "<bool>" not in " ".join(rows)
    assert any(r.startswith("--help Show this message") for r in rows), rows
    if cmd == ("ask",):
        assert any(r.startswith("--json Print the whole result") for r in rows)
        assert any(r.startswith("--max-rounds <int>") for r in rows)  # an option taking a value keeps its type


def test_ingest_routes_text_through_llm_extraction(kg, tmp_path):
    doc = tmp_path / "notes.md"
    doc.write_text("Smoking causes lung cancer.\n", "utf-8")
    kg("ingest", str(doc), "--llm", "kgoffline/rules")
    d = json.loads(kg("expand", "smoking", "--json").stdout)
    [uid] = d["units"]  # one fact extracted, stored under a content-hash id
    assert uid.startswith("u-")
    again = kg("ingest", str(doc), "--llm", "kgoffline/rules", "--json")
    assert json.loads(again.stdout)["unchanged_documents"] == 1  # same content hash: not re-extracted
