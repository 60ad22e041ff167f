"""``kg dump`` / ``kg restore``: a restore into an empty store reproduces every query result,
across backends; damaged dumps are refused whole; the target store is protected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgservice.admin import doctor
from kgservice.admin.backup import DumpError, TargetNotEmpty, dump, read_dump, restore
from kgservice.cli.app import app
from kgservice.export.graphjson import build_graph_data
from kgservice.notation import parse_file, parse_units
from kgservice.stores.base import IngestConflict, StoreError
from tests.contract.corpus import SMALL
from tests.reliability.conftest import BAD, ROOT, state_of
from tests.reliability.test_doctor import answers

SAFE = ["cypher_injection", "quotes_backticks_escapes", "nfkc_case_variants", "unicode_oddities", "synonym_cycle",
        "belongs_to_cycle", "node_supersession_cycle", "repeated_arguments"]


DEMO = sorted((ROOT / "demo/units").glob("*.units"))
PROBES = ["cat", "smoking", "吸烟", "python", "cpython", "distutils", "x", "a", "p", "foo bar", "mammal", "hub"]


def corpus(lexicon, demo: int = len(DEMO)) -> list[list]:
    """Batches in ingest order, with distinct ingest times (restore must keep them)."""
    batches = [parse_units(SMALL, lexicon, doc="small.units")]
    batches += [parse_file(f, lexicon) for f in DEMO[:demo]]
    batches += [parse_file(BAD / f"safe/{name}.units", lexicon) for name in SAFE]
    # a later batch that supersedes stored units and relabels nothing: the label stays the first surface form
    batches.append(parse_units("#late1 {Smoking} [causes] {heart disease}\n#late2 {python 3.14} [is latest release of] {Python}\n"
                               "    ()[supersedes] #p3\n#zb {Foo Bar} [has] {x}\n#za {foo bar} [has] {y}\n", lexicon,
                               doc="late.units"))
    return [[u.model_copy(update={"ingested_at": f"2025-01-{i + 1:02d}T00:00:00+00:00"}) for u in b]
            for i, b in enumerate(batches)]


def graph_json(store) -> dict:
    data = build_graph_data(store, communities=False)
    data.pop("graph")
    return data


def observed(kb, sample: int | None = None, portable: bool = False) -> dict:
    store = kb.store
    result = {"state": state_of(store), "graph_json": graph_json(store)}
    if portable:  # across backends: only Neo4j keeps ARG / MOD edges apart from the context index
        del result["state"]["args"], result["state"]["mods"]
    full = answers(store) if sample is None else None
    if full is None:  # Neo4j: every procedure for the probe nodes and a sample, every unit's chain end
        ids = sorted(n.id for n in store.iter_nodes())
        pick = sorted(set(PROBES) | set(ids[:: max(1, len(ids) // sample)]))
        from kgservice.expansion import expand_directed, spread_activation

        full = {n: (store.subject_mentions(n), store.context_mentions(n), store.synonym_class(n),
                    store.belongs_to_ancestors(n), store.sunk_units(n), store.node_superseded_end(n),
                    store.narrowed_by(n), expand_directed(store, [n]).to_dict(),
                    sorted(spread_activation(store, [n]).energy.items())) for n in pick}
        full["#ends"] = store.superseded_end(sorted(u.id for u in store.iter_units()))
    result["answers"] = full
    labels = sorted({n.label for n in store.iter_nodes() if n.kind.value != "literal"})[:: 40 if sample is None else 80]
    result["search"] = {t: [(h.node_id, round(h.score, 5)) for h in kb.vector_entry(t, top_k=3)] for t in labels}
    return result


@pytest.mark.parametrize("source,target", [("embedded", "embedded"), ("embedded", "neo4j"),
                                           ("neo4j", "embedded"), ("neo4j", "neo4j")])
def test_restore_into_an_empty_store_reproduces_every_query_result(source, target, make_kb, lexicon, tmp_path):
    neo = "neo4j" in (source, target)
    sample = 8 if neo else None
    src = make_kb(source, name="src")
    for batch in corpus(lexicon, demo=2 if neo else len(DEMO)):
        src.ingest_units(batch)
    before = observed(src, sample, portable=source != target)
    info = dump(src.store, tmp_path / "kb.jsonl.gz")
    assert info["units"] == before["state"]["counts"]["units"]
    if source == target == "neo4j":
        src.close()
        dst = make_kb(target, name="dst")  # wipes the one Neo4j database
        assert dst.store.counts()["units"] == 0
    else:
        dst = make_kb(target, name="dst")
    rep = restore(dst, tmp_path / "kb.jsonl.gz")
    assert rep["units_added"] == info["units"] and rep["units_unchanged"] == 0
    assert rep["labels_restored"] >= 1  # {Foo Bar} came before {foo bar} (#zb, #za): the first surface form wins
    after = observed(dst, sample, portable=source != target)
    assert after == before
    assert doctor.check(dst).ok


def test_dump_is_deterministic_apart_from_its_timestamp(make_kb, lexicon, tmp_path):
    kb = make_kb("embedded")
    kb.ingest_units(corpus(lexicon)[0])
    a, b = dump(kb.store, tmp_path / "a.jsonl"), dump(kb.store, tmp_path / "b.jsonl")
    assert a["sha256"] != "" and a["units"] == b["units"]
    la, lb = (tmp_path / "a.jsonl").read_text().splitlines(), (tmp_path / "b.jsonl").read_text().splitlines()
    assert la[1:-1] == lb[1:-1]
    # dependency order: a unit comes after every unit it supersedes
    order = [json.loads(x)["unit"]["id"] for x in la[1:-1] if x.startswith('{"unit"')]
    assert order.index("p1") < order.index("p2") < order.index("p3")


@pytest.fixture
def dumped(make_kb, lexicon, tmp_path):
    kb = make_kb("embedded", name="src")
    kb.ingest_units(corpus(lexicon)[0], embed=False)
    dump(kb.store, tmp_path / "good.jsonl")
    return tmp_path / "good.jsonl"


def _damage(good: Path, how: str, out: Path) -> Path:
    lines = good.read_bytes().split(b"\n")[:-1]
    if how == "truncated_last_line":
        data = b"\n".join(lines[:-1]) + b"\n"
    elif how == "truncated_mid_line":
        data = good.read_bytes()[: len(good.read_bytes()) // 2]
    elif how == "flipped_byte":
        i = next(k for k, x in enumerate(lines) if b'"subject":"' in x and k >= len(lines) // 3)
        j = lines[i].index(b'"subject":"') + len(b'"subject":"')
        lines[i] = lines[i][:j] + (b"Q" if lines[i][j:j + 1] != b"Q" else b"R") + lines[i][j + 1:]
        data = b"\n".join(lines) + b"\n"
    elif how == "unit_added":
        extra = json.loads(lines[1])
        extra["unit"]["id"] = "extra1"
        data = b"\n".join(lines[:2] + [json.dumps(extra).encode()] + lines[2:]) + b"\n"
    elif how == "unit_removed":
        data = b"\n".join(lines[:1] + lines[2:]) + b"\n"
    elif how == "end_twice":
        data = b"\n".join(lines + lines[-1:]) + b"\n"
    elif how == "node_before_unit":
        i = next(k for k, x in enumerate(lines) if x.startswith(b'{"node"'))
        lines.insert(1, lines.pop(i))
        data = b"\n".join(lines) + b"\n"
    elif how == "header_count":
        head = json.loads(lines[0])
        head["units"] += 1
        data = b"\n".join([json.dumps(head).encode()] + lines[1:]) + b"\n"
    elif how == "crlf_rewritten":
        data = b"\r\n".join(lines) + b"\r\n"
    else:
        raise AssertionError(how)
    out.write_bytes(data)
    return out


DAMAGE = {"truncated_last_line": "no end record", "truncated_mid_line": "not JSON", "flipped_byte": "checksum mismatch",
          "unit_added": "counts do not match", "unit_removed": "counts do not match", "end_twice": "after the end record",
          "node_before_unit": "unit record after node records", "header_count": "counts do not match",
          "crlf_rewritten": "checksum mismatch"}


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_damaged_dump_is_refused_whole(how, dumped, make_kb, tmp_path):
    bad = _damage(dumped, how, tmp_path / f"{how}.jsonl")
    with pytest.raises(DumpError, match=DAMAGE[how]):
        read_dump(bad)
    kb = make_kb("embedded", name="dst")
    with pytest.raises(DumpError):
        restore(kb, bad)
    assert kb.store.counts()["units"] == 0


def test_target_store_is_protected(dumped, make_kb, lexicon, tmp_path):
    kb = make_kb("embedded", name="dst")
    kb.ingest_units(parse_units("#x1 {other} [has] {thing}\n", lexicon), embed=False)
    with pytest.raises(TargetNotEmpty, match="already holds 1 unit"):
        restore(kb, dumped, embed=False)
    assert restore(kb, dumped, merge=True, embed=False)["units_added"] == 18
    assert restore(kb, dumped, merge=True, embed=False)["units_unchanged"] == 18  # idempotent
    # a conflicting unit id rejects the whole merge before anything is written
    other = make_kb("embedded", name="conflict")
    other.ingest_units(parse_units("#s1 {smoking} [prevents] {nothing}\n#zz {kept} [has] {this}\n", lexicon), embed=False)
    before = state_of(other.store)
    with pytest.raises(IngestConflict, match="#s1 already exists with different content"):
        restore(other, dumped, merge=True, embed=False)
    assert state_of(other.store) == before
    # --replace: verified first, then wipe and restore
    rep = restore(other, dumped, replace=True, embed=False)
    assert rep["replaced"] and other.store.counts()["units"] == 18 and not other.store.get_units(["zz"])
    with pytest.raises(DumpError):
        restore(other, BAD / "dumps/header_only.jsonl", replace=True)
    assert other.store.counts()["units"] == 18  # a bad dump never wipes anything


def test_dump_failure_leaves_no_file(make_kb, lexicon, tmp_path, monkeypatch):
    kb = make_kb("embedded")
    kb.ingest_units(corpus(lexicon)[0], embed=False)
    dump(kb.store, tmp_path / "kb.jsonl")
    good = (tmp_path / "kb.jsonl").read_bytes()

    def boom():
        raise OSError("disk full (simulated)")
        yield  # pragma: no cover

    monkeypatch.setattr(kb.store, "iter_nodes", boom)
    with pytest.raises(OSError, match="disk full"):
        dump(kb.store, tmp_path / "kb.jsonl")
    assert (tmp_path / "kb.jsonl").read_bytes() == good  # the previous dump is intact
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".kb.jsonl")] == []


def test_cli_dump_restore(tmp_path, lexicon):
    runner = CliRunner()
    a = ["--data-dir", str(tmp_path / "a"), "--embedder", "hash:64"]
    b = ["--data-dir", str(tmp_path / "b"), "--embedder", "hash:64"]
    f = tmp_path / "small.units"
    f.write_text(SMALL, "utf-8")
    assert runner.invoke(app, [*a, "ingest", str(f)]).exit_code == 0
    r = runner.invoke(app, [*a, "dump", str(tmp_path / "kb.jsonl"), "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["units"] == 18
    r = runner.invoke(app, [*b, "restore", str(tmp_path / "kb.jsonl")])
    assert r.exit_code == 0, r.output
    assert json.loads(runner.invoke(app, [*b, "stats", "--json"]).stdout)["units"] == 18
    assert runner.invoke(app, [*b, "doctor"]).exit_code == 0
    r = runner.invoke(app, [*b, "restore", str(tmp_path / "kb.jsonl")])
    assert r.exit_code == 2 and "--merge" in r.stderr and "--replace" in r.stderr  # not empty: the user must choose
    assert runner.invoke(app, [*b, "restore", str(tmp_path / "kb.jsonl"), "--replace"]).exit_code == 2  # needs --yes
    assert runner.invoke(app, [*b, "restore", str(tmp_path / "kb.jsonl"), "--replace", "--yes"]).exit_code == 0
    r = runner.invoke(app, [*b, "restore", str(BAD / "dumps/damaged.jsonl.gz"), "--merge"])
    assert r.exit_code == 2 and "damaged gzip" in r.stderr
    ro = runner.invoke(app, [*b, "restore", str(tmp_path / "kb.jsonl"), "--merge"], env={"KG_READ_ONLY": "1"})
    assert ro.exit_code == 1 and "read-only" in ro.stderr


@pytest.mark.neo4j
def test_neo4j_restore_replace_keeps_api_keys_and_jobs(make_kb, lexicon, tmp_path):
    """`kg restore --replace` on Neo4j (one database: wipe, then restore) replaces the knowledge
    only: the team's API keys and queued jobs live in the same database and must survive it."""
    kb = make_kb("neo4j")
    kb.ingest_units(parse_units(SMALL, lexicon, doc="small.units"))
    dump(kb.store, tmp_path / "kb.jsonl")
    key, _ = kb.key_store().create("alice", "admin")
    job = kb.jobs.submit("ingest", {"units": "#q1 {tea} [contains] {caffeine}", "doc": "q.units"}, "alice", "k1")
    kb.ingest_units(parse_units("#extra {x} [is a] {y}", lexicon, doc="extra.units"))
    rep = restore(kb, tmp_path / "kb.jsonl", replace=True)
    assert rep["units_added"] == 18 and kb.store.counts()["units"] == 18  # the extra unit is gone
    assert kb.key_store().verify(key).user == "alice"  # the key still opens the door
    assert kb.jobs.get(job.id).status == "queued"  # the queued job is still there


@pytest.mark.parametrize("target,replace", [("embedded", False), ("embedded", True), ("neo4j", False)])
def test_dump_and_restore_carry_duplicate_aliases(target, replace, make_kb, lexicon, tmp_path):
    """A merged duplicate's id stays usable after a dump / restore: a later batch that
    supersedes it supersedes the unit it was merged into."""
    src = make_kb("embedded", name="src")
    src.ingest_units(parse_units("#a {smoking} [causes] {lung cancer}\n", lexicon))
    assert src.ingest_units(parse_units("#b {Smoking} [leads to] {lung cancer}\n", lexicon)).duplicates == {"b": "a"}
    info = dump(src.store, tmp_path / "kb.jsonl")
    assert info["aliases"] == 1 and read_dump(tmp_path / "kb.jsonl").aliases == {"b": "a"}
    dst = make_kb(target, name="dst")
    if replace:
        dst.ingest_units(parse_units("#old {p} [has] {q}\n", lexicon))
    rep = restore(dst, tmp_path / "kb.jsonl", replace=replace, embed=False)
    assert rep["aliases_restored"] == 1
    store = dst.store
    assert store.aliases(None) == {"b": "a"}
    r = store.ingest(parse_units("#c {smoking} [causes] {lung disease}\n    ()[supersedes] #b\n", lexicon))
    assert r.units_added == 1 and store.superseded_end(["a"]) == {"a": ["c"]}


def test_dump_alias_naming_no_unit_is_refused(make_kb, lexicon, tmp_path):
    kb = make_kb("embedded")
    kb.ingest_units(parse_units("#a {smoking} [causes] {lung cancer}\n#b {Smoking} [leads to] {lung cancer}\n", lexicon))
    dump(kb.store, tmp_path / "kb.jsonl")
    lines = (tmp_path / "kb.jsonl").read_text().splitlines()
    body = [x.replace('"unit":"a"}}', '"unit":"nope"}}') if x.startswith('{"alias"') else x for x in lines[:-1]]
    import hashlib

    digest = hashlib.sha256("".join(x + "\n" for x in body[:]).encode()).hexdigest()
    end = json.loads(lines[-1])
    end["end"]["sha256"] = digest
    (tmp_path / "bad.jsonl").write_text("\n".join(body + [json.dumps(end)]) + "\n")
    with pytest.raises(DumpError, match="alias #b -> #nope: names no unit of the dump"):
        read_dump(tmp_path / "bad.jsonl")


@pytest.mark.neo4j
def test_neo4j_replace_stopped_after_the_wipe_is_named_and_resumed_by_doctor(make_kb, lexicon, tmp_path, monkeypatch):
    """A replace restore on Neo4j wipes first (one database): one that stops afterwards (killed,
    or failing) leaves a record that `kg doctor` names instead of calling the remains drifted,
    and `kg doctor --repair` resumes it from the same dump."""
    kb = make_kb("neo4j")
    kb.ingest_units(parse_units(SMALL, lexicon, doc="small.units"))
    dump(kb.store, tmp_path / "kb.jsonl")
    kb.ingest_units(parse_units("#extra {x} [is a] {y}", lexicon, doc="extra.units"))

    def dies(*a, **kw):
        raise ConnectionError("the restoring process went away")

    monkeypatch.setattr("kgservice.admin.backup.ingest_units", dies)  # restore's batch write
    with pytest.raises(StoreError, match="kg doctor --repair"):
        restore(kb, tmp_path / "kb.jsonl", replace=True)
    monkeypatch.undo()
    report = doctor.check(kb, vectors=False)
    assert [(f.check, f.category) for f in report.findings] == [("restore", "interrupted")]
    assert str((tmp_path / "kb.jsonl").resolve()) in report.findings[0].examples[0]
    fixed = doctor.repair(kb, vectors=False)
    assert fixed.repaired["restore"]["units_added"] == 18
    assert fixed.final.ok and kb.store.counts()["units"] == 18  # the dump, without the extra unit
    assert kb.store.interrupted_restore() is None


def _resealed(lines: list[str], body: list[str], end_over: dict) -> str:
    """A dump text with ``body`` and the end record of ``lines`` updated (checksum recomputed)."""
    import hashlib

    end = json.loads(lines[-1])
    end["end"].update(end_over, sha256=hashlib.sha256("".join(x + "\n" for x in body).encode()).hexdigest())
    return "\n".join(body + [json.dumps(end)]) + "\n"


@pytest.mark.parametrize("target,replace", [("embedded", False), ("embedded", True), ("neo4j", False),
                                            ("neo4j", True)])
def test_dump_and_restore_carry_saved_results(target, replace, make_kb, lexicon, tmp_path):
    """Saved results are part of the knowledge base a dump holds: a restore brings each one back
    unless the target holds it already (by name), and keeps the target's own."""
    src = make_kb("embedded", name="src")
    src.ingest_units(parse_units(SMALL, lexicon, doc="small.units"))
    a = src.save_result("what causes lung cancer?", "smoking", contributor="alice", nodes=["smoking"])
    b = src.save_result("is a cat a mammal?", "yes", contributor="bob", outcome="useful")
    info = dump(src.store, tmp_path / "kb.jsonl")
    dumped = {r.name: r for r in read_dump(tmp_path / "kb.jsonl").saved_results}
    assert info["saved_results"] == 2 and dumped == {a.name: a, b.name: b}
    dst = make_kb(target, name="dst")
    own = dst.save_result("the target's own question", "its answer", contributor="carol")
    if replace:
        dst.ingest_units(parse_units("#old {p} [has] {q}\n", lexicon))
        dst.store.save_result(b)  # already there: not added twice
    before = {r.name for r in dst.saved_results()}  # a shared Neo4j keeps earlier tests' results
    rep = restore(dst, tmp_path / "kb.jsonl", replace=replace, embed=False)
    assert rep["saved_results_restored"] == (1 if replace else 2)
    got = {r.name: r for r in dst.saved_results()}
    assert set(got) == before | {a.name, b.name} and own.name in got and got[a.name] == a and got[b.name] == b
    again = restore(dst, tmp_path / "kb.jsonl", merge=True, embed=False)
    assert again["saved_results_restored"] == 0 and len(dst.saved_results()) == len(got)
    redumped = dump(dst.store, tmp_path / "again.jsonl")  # the target's backend dumps them too
    assert redumped["saved_results"] == len(got)
    assert {r.name for r in read_dump(tmp_path / "again.jsonl").saved_results} == set(got)


def test_dump_without_saved_results_restores_as_before(make_kb, lexicon, tmp_path):
    """A dump written before saved results were dumped (no records, no count) still restores."""
    kb = make_kb("embedded")
    kb.ingest_units(parse_units(SMALL, lexicon, doc="small.units"))
    dump(kb.store, tmp_path / "kb.jsonl")
    lines = (tmp_path / "kb.jsonl").read_text().splitlines()
    end = json.loads(lines[-1])
    del end["end"]["saved_results"]
    (tmp_path / "old.jsonl").write_text("\n".join(lines[:-1] + [json.dumps(end)]) + "\n")
    dst = make_kb("embedded", name="dst")
    rep = restore(dst, tmp_path / "old.jsonl", embed=False)
    assert rep["units_added"] == 18 and rep["saved_results_restored"] == 0 and dst.saved_results() == []


@pytest.mark.parametrize("name,message", [("../escape.md", "must be a plain file name"),
                                          ("same", "a second record with this name")])
def test_dump_saved_result_with_a_bad_name_is_refused(name, message, make_kb, lexicon, tmp_path):
    kb = make_kb("embedded")
    kb.ingest_units(parse_units("#a {smoking} [causes] {lung cancer}\n", lexicon))
    first = kb.save_result("q1", "a1", contributor="alice")
    kb.save_result("q2", "a2", contributor="alice")
    dump(kb.store, tmp_path / "kb.jsonl")
    lines = (tmp_path / "kb.jsonl").read_text().splitlines()
    saved = [i for i, x in enumerate(lines) if x.startswith('{"saved_result"')]
    body = list(lines[:-1])
    rec = json.loads(body[saved[-1]])
    rec["saved_result"]["name"] = first.name if name == "same" else name
    body[saved[-1]] = json.dumps(rec)
    (tmp_path / "bad.jsonl").write_text(_resealed(lines, body, {}))
    with pytest.raises(DumpError, match=f"bad.jsonl:{saved[-1] + 1}: not a valid saved_result record .*{message}"):
        read_dump(tmp_path / "bad.jsonl")
    dst = make_kb("embedded", name="dst")
    with pytest.raises(DumpError):
        restore(dst, tmp_path / "bad.jsonl", embed=False)
    assert dst.saved_results() == [] and dst.store.counts()["units"] == 0


@pytest.mark.parametrize("target,replace", [("embedded", False), ("embedded", True), ("neo4j", False),
                                            ("neo4j", True)])
def test_dump_and_restore_carry_entity_resolution_decisions(target, replace, make_kb, lexicon, tmp_path):
    """The model's answers for pairs of labels go with the knowledge: a restored store never asks
    a pair the dumped one asked. The target's own decision for a pair stays."""
    from kgservice.extraction.decisions import MergeDecisions

    src = make_kb("embedded", name="src")
    src.ingest_units(parse_units(SMALL, lexicon, doc="small.units"))
    theirs = MergeDecisions(src.store)
    theirs.put("Seattle", "Seattle, Washington", True, "the same city", "m")
    theirs.put("zip", "gunzip", False, "a format and a program", "m")
    info = dump(src.store, tmp_path / "kb.jsonl")
    assert info["merge_decisions"] == 2
    assert {(m.a, m.b, m.same) for m in read_dump(tmp_path / "kb.jsonl").merge_decisions} == {
        ("seattle", "seattle washington", True), ("gunzip", "zip", False)}  # form keys: no comma
    dst = make_kb(target, name="dst")
    if target == "neo4j":
        from tests.neo4j_helpers import wipe_all

        wipe_all(dst.store)  # a shared Neo4j keeps earlier tests' decisions (a restore's wipe keeps them)
    ours = MergeDecisions(dst.store)
    ours.put("gunzip", "zip", True, "the target's own answer", "m2")
    if replace:
        dst.ingest_units(parse_units("#old {p} [has] {q}\n", lexicon))
    rep = restore(dst, tmp_path / "kb.jsonl", replace=replace, embed=False)
    assert rep["merge_decisions_restored"] == 1  # Seattle; the target had decided zip / gunzip
    assert ours.get("Seattle, Washington", "Seattle") is True and ours.get("zip", "gunzip") is True
    assert restore(dst, tmp_path / "kb.jsonl", merge=True, embed=False)["merge_decisions_restored"] == 0
    lines = (tmp_path / "kb.jsonl").read_text().splitlines()
    body = lines[1:-1]
    twice = [x for x in body if x.startswith('{"merge_decision"')][:1] * 2
    (tmp_path / "bad.jsonl").write_text(_resealed(lines, [lines[0]] + body + twice[:1], {"merge_decisions": 3}))
    with pytest.raises(DumpError, match="a second record for it"):
        read_dump(tmp_path / "bad.jsonl")
