"""Node ids and file names (issue 13: B10, B19)."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.ids import literal_id, node_id


def test_entry_ids_never_collide_with_literal_ids():
    """B10: {lit:high} had the id of the literal (high). The mapping must be injective across
    both kinds: checked on labels built to collide (hand-picked, and the escape itself)."""
    labels = ["high", "lit:high", "ｌｉｔ:HIGH", "ent:lit:high", "ent:high", "lit:", "ent:", "LIT:x", "literally"]
    entry = {node_id(x) for x in labels}
    literal = {literal_id(x) for x in labels}
    assert not entry & literal
    assert node_id("high") == "high" and node_id("literally") == "literally"  # ordinary labels unchanged
    assert node_id("lit:high") == node_id("ｌｉｔ:HIGH") == "ent:lit:high"  # NFKC + casefold still merge
    assert len({node_id(x) for x in ["lit:high", "ent:lit:high", "high"]}) == 3


def test_lit_prefixed_concept_is_its_own_node(tmp_path):
    f = tmp_path / "lc.units"
    f.write_text("#lc1 {x} [has] (high)\n#lc2 {lit:high} [causes] {danger}\n#lc3 {ｌｉｔ:HIGH} [causes] {risk}\n",
                 "utf-8")
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    assert runner.invoke(app, [*base, "ingest", str(f)]).exit_code == 0
    r = runner.invoke(app, [*base, "expand", "lit:high", "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    assert got["seeds"] == ["ent:lit:high"] and sorted(got["units"]) == ["lc2", "lc3"]  # not #lc1's (high)
    hits = json.loads(runner.invoke(app, [*base, "search", "lit:high", "--json"]).stdout)
    assert hits and hits[0]["node_id"] == "ent:lit:high"  # an entry node: embedded, found by search


@pytest.mark.parametrize("raw_name", [b"bad\xff.units", b"esc\x1bname.units", b"new\nline.units"])
def test_file_names_that_are_not_text_can_be_ingested(raw_name, tmp_path):
    """B19: such a name became the units' doc and the whole batch was refused, without naming
    the file. The doc is now the name with \\xNN escapes; re-ingest is a no-op."""
    d = os.fsencode(tmp_path)
    path = os.fsdecode(d + b"/" + raw_name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("#fn1 {a} [has] {b}\n")
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    r = runner.invoke(app, [*base, "ingest", path])
    assert r.exit_code == 0, r.output
    expected_doc = raw_name.decode("utf-8", "backslashreplace").replace("\x1b", "\\x1b").replace("\n", "\\x0a")
    r = runner.invoke(app, [*base, "dump", str(tmp_path / "d.jsonl")])
    unit = json.loads((tmp_path / "d.jsonl").read_text("utf-8").splitlines()[1])["unit"]
    assert unit["doc"] == expected_doc
    r = runner.invoke(app, [*base, "ingest", path, "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["units_added"] == 0


def test_a_bad_unit_names_its_file(tmp_path):
    good = tmp_path / "good.units"
    good.write_text("#g1 {a} [has] {b}\n", "utf-8")
    bad = tmp_path / "bad_one.units"
    bad.write_text("#b1 {a\x07b} [has] {c}\n", "utf-8")
    r = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "ingest", str(good), str(bad)])
    assert r.exit_code == 2 and "(in bad_one.units)" in r.stderr, r.output


def test_fifo_is_named_for_what_it_is(tmp_path):
    """B21 (message note): a FIFO or /dev/zero was refused as 'no such file or folder'."""
    fifo = tmp_path / "pipe.units"
    os.mkfifo(fifo)
    for target in (str(fifo), "/dev/zero"):
        r = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "ingest", target])
        assert r.exit_code == 2 and "not a regular file or folder" in r.stderr, r.output
