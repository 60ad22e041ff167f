"""The bad-input corpus (tests/bad_input/, expectations in expected.json): every file gets a
clear error or is handled safely, and a rejected batch leaves the store exactly as it was.

Store-level cases run on both backends against a store that already holds the contract
corpus, so "unchanged" is checked on a non-empty graph (units, nodes, reverse indexes,
relation edges, supersession links)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgservice.admin.backup import DumpError, read_dump, restore
from kgservice.cli.app import app
from kgservice.notation import NotationErrors, parse_file, parse_units
from kgservice.stores.base import IngestConflict
from tests.contract.corpus import SMALL
from tests.reliability.conftest import BAD, state_of

EXPECTED: dict[str, dict] = json.loads((BAD / "expected.json").read_text("utf-8"))
STAMP = "2025-01-01T00:00:00+00:00"


def cases(folder: str, *outcomes: str) -> list[str]:
    return sorted(k for k, v in EXPECTED.items() if k.startswith(folder + "/") and (not outcomes or v["outcome"] in outcomes))


def stamped(units):
    return [u.model_copy(update={"ingested_at": STAMP}) for u in units]


def test_every_corpus_file_has_an_expectation():
    files = {str(p.relative_to(BAD)) for p in BAD.rglob("*") if p.is_file() and p.name not in ("expected.json", "README.md")}
    assert files == set(EXPECTED)
    assert len(EXPECTED) >= 130


@pytest.fixture(scope="module", params=["embedded", "neo4j"])
def seeded(request, tmp_path_factory, lexicon):
    """(store, state before) holding the contract corpus; shared by the rejection tests of a
    module, which all leave it unchanged (that is what they check)."""
    if request.param == "neo4j":
        store = request.getfixturevalue("neo4j_proc").connect()
        store.wipe()
    else:
        from kgservice.stores.embedded import EmbeddedStore

        store = EmbeddedStore(tmp_path_factory.mktemp("seeded") / "graph")
    seed = stamped(parse_units(SMALL, lexicon, doc="small.units"))
    store.ingest(seed)
    before = state_of(store)

    def ensure_seeded():  # another test may have wiped the one Neo4j database in between
        if store.counts() != before["counts"]:
            store.wipe()
            store.ingest(seed)

    yield store, before, ensure_seeded
    store.close()


# -- notation and encodings: the parser names the file, line and column ----------------------

@pytest.mark.parametrize("rel", cases("notation") + cases("encoding", "parse_error"))
def test_parse_errors_point_at_the_line(rel, lexicon):
    spec = EXPECTED[rel]
    with pytest.raises(NotationErrors) as ei:
        parse_file(BAD / rel, lexicon)
    errors = ei.value.errors
    assert spec["match"] in errors[0].message, str(errors[0])
    assert errors[0].line == spec["line"] and errors[0].column >= 1
    assert str(errors[0]).startswith(f"{BAD / rel}:{spec['line']}:")
    if "errors" in spec:
        assert len(errors) == spec["errors"]


def test_huge_line_is_refused_with_its_position(tmp_path, lexicon):
    f = tmp_path / "huge.units"
    f.write_text("#h1 {a} [has] {b}\n#h2 {" + "x" * 100_001 + "} [has] {c}\n#h3 {c} [has] {d}\n", "utf-8")
    with pytest.raises(NotationErrors) as ei:
        parse_file(f, lexicon)
    (e,) = ei.value.errors
    assert e.line == 2 and "over the 100000 limit" in e.message


def test_huge_file_of_valid_lines_parses(tmp_path, lexicon):
    f = tmp_path / "big.units"
    f.write_text("".join(f"{{n{i}}} [has] {{m{i % 97}}}\n" for i in range(20_000)), "utf-8")
    assert len(parse_file(f, lexicon)) == 20_000


# -- batches through the store: all or nothing, on both backends -----------------------------

@pytest.mark.parametrize("rel", cases("batches") + cases("encoding", "rejected"))
def test_rejected_batch_leaves_the_store_unchanged(rel, seeded, lexicon):
    store, before, ensure_seeded = seeded
    ensure_seeded()
    units = stamped(parse_file(BAD / rel, lexicon))
    with pytest.raises(IngestConflict, match="batch rejected, nothing stored") as ei:
        store.ingest(units)
    assert EXPECTED[rel]["match"] in str(ei.value)
    assert state_of(store) == before


@pytest.mark.parametrize("rel", cases("encoding", "ok") + cases("safe"))
def test_accepted_files_are_stored_whole_and_idempotently(rel, backend, make_kb, lexicon):
    store = make_kb(backend).store
    units = stamped(parse_file(BAD / rel, lexicon))
    assert len(units) == EXPECTED[rel]["units"]
    report = store.ingest(units)
    assert report.units_added == len(units) == store.counts()["units"]
    assert store.ingest(units).units_added == 0


def test_rejected_batches_through_the_cli_store_nothing(tmp_path):
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    seed = tmp_path / "small.units"
    seed.write_text(SMALL, "utf-8")
    assert runner.invoke(app, [*base, "ingest", str(seed)]).exit_code == 0
    stats = runner.invoke(app, [*base, "stats", "--json"]).stdout
    files = [BAD / r for r in cases("batches") + cases("encoding", "rejected") + cases("notation") + cases("encoding", "parse_error")]
    for f in files:
        r = runner.invoke(app, [*base, "ingest", str(f)])
        assert r.exit_code == 2, (f, r.output)
        assert "error" in r.stderr and "Traceback" not in r.output
    # all of them at once: every file's problems are listed, still nothing stored
    r = runner.invoke(app, [*base, "ingest", *map(str, files)])
    assert r.exit_code == 2
    assert runner.invoke(app, [*base, "stats", "--json"]).stdout == stats
    # error text is printed verbatim: notation in brackets is not eaten as console markup
    r = runner.invoke(app, [*base, "ingest", str(BAD / "batches/id_reused_for_other_fact.units")])
    assert "[causes]" in r.stderr
    odd = tmp_path / "markup.units"
    odd.write_text("#mk1 {x [/] [/bold]} [has] {y}\n", "utf-8")
    assert runner.invoke(app, [*base, "ingest", str(odd)]).exit_code == 0
    other = tmp_path / "other.units"  # the id again in another document (in its own, it would be an edit)
    other.write_text("#mk1 {other} [has] {y}\n", "utf-8")
    r = runner.invoke(app, [*base, "ingest", str(other)])
    assert r.exit_code == 2 and "[/] [/bold]}" in r.stderr and "Traceback" not in r.output


# -- LLM replies ------------------------------------------------------------------------------

def _llm_case(rel: str):
    spec = EXPECTED[rel]
    marks = [pytest.mark.xfail(strict=True, reason=spec["known_gap"])] if "known_gap" in spec else []
    return pytest.param(rel, marks=marks, id=rel)


@pytest.mark.parametrize("rel", [_llm_case(r) for r in cases("llm")])
def test_llm_replies(rel, lexicon):
    from kgservice.extraction import extract_text, to_units
    from kgservice.llm import LLM, LLMOutputError
    from kgservice.llm.client import ensure_litellm
    from kgservice.llm.offline import SCRIPT
    from kgservice.stores.validate import prepare_batch

    ensure_litellm()
    spec = EXPECTED[rel]
    reply = (BAD / rel).read_text("utf-8")
    SCRIPT.clear()
    SCRIPT.override_task("extract", lambda payload: reply)
    llm = LLM("kgoffline/scripted", retry_wait=0, max_retries=0, repair_attempts=1)
    try:
        source = "Cats are mammals and mammals have fur."
        if spec["outcome"] == "llm_error":
            with pytest.raises(LLMOutputError) as ei:
                extract_text(llm, source, "detail")
            assert spec["match"] in str(ei.value)
            assert llm.usage.of("extract").repairs == 1 and llm.usage.of("extract").calls == 2
            return
        units = to_units(extract_text(llm, source, "detail"), lexicon, doc="d.txt", mode="detail")
        if spec["outcome"] == "rejected":
            with pytest.raises(IngestConflict, match=re.escape(spec["match"])):
                prepare_batch(units, lambda ids: {})
        else:
            assert len(units) == spec["units"]
            prepare_batch(units, lambda ids: {})
    finally:
        SCRIPT.clear()


# -- unit JSON and dump files -------------------------------------------------------------------

def write_dump(path: Path, unit_objs: list) -> Path:
    """A well-formed dump (right header, counts and checksum) around arbitrary unit records."""
    lines = [json.dumps({"kgservice_dump": 1, "units": len(unit_objs), "nodes": 0})]
    lines += [json.dumps({"unit": u}) for u in unit_objs]
    body = "".join(line + "\n" for line in lines).encode("utf-8")
    end = json.dumps({"end": {"units": len(unit_objs), "nodes": 0, "sha256": hashlib.sha256(body).hexdigest()}})
    path.write_bytes(body + end.encode() + b"\n")
    return path


@pytest.mark.parametrize("rel", cases("units_json"))
def test_unit_json_in_a_dump(rel, backend, make_kb, tmp_path):
    spec = EXPECTED[rel]
    kb = make_kb(backend)
    dump_file = write_dump(tmp_path / "d.jsonl", json.loads((BAD / rel).read_text("utf-8")))
    before = state_of(kb.store)
    if spec["outcome"] == "invalid":
        with pytest.raises(DumpError, match="not a valid unit") as ei:
            restore(kb, dump_file, embed=False)
        assert spec["match"] in str(ei.value)
    elif spec["outcome"] == "rejected":
        with pytest.raises(IngestConflict) as ei:
            restore(kb, dump_file, embed=False)
        assert spec["match"] in str(ei.value)
    elif spec["outcome"] == "disagrees":  # valid JSON and checksum, but not what this kgservice derives
        with pytest.raises(DumpError, match="disagree with this kgservice") as ei:
            restore(kb, dump_file, embed=False)
        assert spec["match"] in str(ei.value)
    else:
        assert restore(kb, dump_file, embed=False)["units_added"] == spec["units"]
        return
    assert state_of(kb.store) == before


@pytest.mark.parametrize("rel", cases("dumps"))
def test_damaged_or_foreign_dump_files(rel, make_kb):
    spec = EXPECTED[rel]
    with pytest.raises(DumpError) as ei:
        read_dump(BAD / rel)
    assert spec["match"] in str(ei.value)
    kb = make_kb("embedded")
    with pytest.raises(DumpError):
        restore(kb, BAD / rel)
    assert kb.store.counts()["units"] == 0


@pytest.mark.parametrize("label", ["[/]", "[bold]x[/bold]", "[red", "{x} [has] {y}", "\x1b[2Jclear", "'; MATCH (n) DETACH DELETE n //"])
def test_query_labels_with_markup_or_cypher_are_reported_verbatim(label, tmp_path):
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    assert runner.invoke(app, [*base, "init"]).exit_code == 0
    r = runner.invoke(app, [*base, "expand", label])
    assert r.exit_code == 2 and "no node" in r.stderr and "Traceback" not in r.output
    assert repr(label) in r.stderr.replace("\n", "")


@pytest.mark.neo4j
def test_safe_inputs_terminate_and_both_backends_agree(make_kb, lexicon):
    """Cycles of every kind, hostile and odd labels, chains longer than the closure bound: every
    procedure and both expansions terminate and give the same answer on both backends."""
    from tests.reliability.test_doctor import answers

    big = ("safe/many_arguments.units",)  # 2000 argument nodes: stored above, too many to probe one by one
    units = stamped([u for rel in cases("safe") if rel not in big for u in parse_file(BAD / rel, lexicon)])
    got = {}
    for backend in ("embedded", "neo4j"):
        store = make_kb(backend, name=backend).store
        store.ingest(units)
        got[backend] = (answers(store), state_of(store))
    assert got["embedded"][0] == got["neo4j"][0]
    portable = [{k: v for k, v in s.items() if k not in ("args", "mods")} for _, s in got.values()]
    assert portable[0] == portable[1]
    ends = got["embedded"][0]["#ends"]
    assert ends["lc0"] == ["lc12"] and ends["lc5"] == ["lc12"]  # a 12-version chain ends at the newest
    assert got["embedded"][0]["x"][7] == ["x"]  # a replacement cycle: the node stands for itself
