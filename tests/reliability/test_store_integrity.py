"""The embedded store's files under damage (issue 13: E12, E13, E14, E15): every snapshot and
journal record is checksummed, damage and a missing snapshot are detected before anything is
read or written, `kg doctor` names the category and the fix, `--repair` never re-derives from
damaged data, and `kg doctor --salvage` / `kg restore --replace --yes` get a store back."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.stores.base import StoreDamaged
from kgservice.stores.embedded import EmbeddedStore
from tests.contract.corpus import SMALL

EXTRA = ["#t1 {alpha} [has] {beta}\n", "#t2 {gamma} [causes] {delta}\n    ()[confidence] (high)\n",
         "#t3 {epsilon} [belongs to] {zeta}\n"]


class KG:
    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.dir = tmp_path / "kg"
        self.graph = self.dir / "graph"
        self.runner = CliRunner()

    def __call__(self, *args, env=None):
        return self.runner.invoke(app, ["--data-dir", str(self.dir), "--embedder", "hash:64", *args], env=env)

    def ingest_text(self, name: str, text: str):
        f = self.tmp / name
        f.write_text(text, "utf-8")
        r = self(*["ingest", str(f)])
        assert r.exit_code == 0, r.output
        return r

    def units(self) -> int:
        r = self("stats", "--json")
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)["units"]

    def unit_lines(self, dump) -> list[str]:
        return sorted(ln for ln in dump.read_text("utf-8").splitlines() if ln.startswith('{"unit"'))


@pytest.fixture()
def kg(tmp_path):
    """18 units in a compacted snapshot, then three one-unit batches in the journal, and a dump."""
    k = KG(tmp_path)
    k.ingest_text("small.units", SMALL)
    EmbeddedStore(k.graph).compact()
    for i, text in enumerate(EXTRA):
        k.ingest_text(f"t{i}.units", text)
    assert k.units() == 21
    r = k("dump", str(tmp_path / "good.jsonl"))
    assert r.exit_code == 0, r.output
    return k


def _flip(path, offset: int, mask: int = 0x01) -> None:
    b = bytearray(path.read_bytes())
    b[offset] ^= mask
    path.write_bytes(bytes(b))


def test_every_snapshot_bit_flip_is_detected(kg):
    """E13: 10 seeds x 3 flips anywhere in the snapshot; each one must be refused (CRC32 per
    frame catches every flip of up to 3 bits in a frame, so none may load)."""
    snap = kg.graph / "graph.pkl"
    good = snap.read_bytes()
    for seed in range(10):
        rnd = random.Random(seed)
        b = bytearray(good)
        for _ in range(3):
            b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
        snap.write_bytes(bytes(b))
        with pytest.raises(StoreDamaged) as ei:
            EmbeddedStore(kg.graph)
        assert ei.value.kind == "damaged"
    snap.write_bytes(good)
    assert len(EmbeddedStore(kg.graph).s.units) == 21


def test_label_flip_is_refused_not_laundered(kg):
    """E13: a label changed in the snapshot ('smoking' -> 'smXking') used to load and then be
    re-derived as 'consistent' by --repair. Now every command refuses, repair included, and the
    dump restores the store (outside the snapshot nothing was touched)."""
    snap = kg.graph / "graph.pkl"
    data = snap.read_bytes()
    i = data.find(b"smoking")
    assert i > 0
    _flip(snap, i + 2, ord("o") ^ ord("X"))
    for args in (["stats"], ["expand", "smoking"], ["doctor", "--repair"]):
        r = kg(*args)
        assert r.exit_code == 1 and "Traceback" not in r.output, (args, r.output)
        msg = " ".join(r.output.split())
        assert "kg doctor --salvage" in msg and "kg restore DUMP --replace --yes" in msg, msg
    r = kg("doctor", "--json")
    rep = json.loads(r.stdout)
    assert rep["ok"] is False and [f["category"] for f in rep["findings"]] == ["damaged"]
    assert "damaged" in rep["fixes"]
    r = kg("restore", str(kg.tmp / "good.jsonl"), "--replace", "--yes")
    assert r.exit_code == 0, r.output
    assert kg("doctor").exit_code == 0
    kg("dump", str(kg.tmp / "after.jsonl"))
    assert kg.unit_lines(kg.tmp / "after.jsonl") == kg.unit_lines(kg.tmp / "good.jsonl")


def test_truncated_snapshot_then_restore_replace(kg):
    """E12: a truncated snapshot; restore --replace used to fail because it opened the store first."""
    snap = kg.graph / "graph.pkl"
    snap.write_bytes(snap.read_bytes()[: snap.stat().st_size // 2])
    r = kg("doctor")
    assert r.exit_code == 1 and "damaged" in r.stdout and "truncated" in " ".join(r.stdout.split())
    r = kg("restore", str(kg.tmp / "good.jsonl"), "--replace", "--yes")
    assert r.exit_code == 0, r.output
    assert kg.units() == 21 and kg("doctor").exit_code == 0


def test_missing_snapshot_refuses_writes_and_keeps_the_journal(kg):
    """E14: graph.pkl deleted next to a journal that continues it: used to look empty, --repair
    deleted every vector and the next ingest overwrote the journal."""
    snap = kg.graph / "graph.pkl"
    saved = snap.read_bytes()
    journal = kg.graph / "graph.journal"
    jbytes = journal.read_bytes()
    snap.unlink()
    r = kg("stats", "--json")
    assert r.exit_code == 1 and "missing" in r.stderr
    rep = json.loads(kg("doctor", "--json").stdout)
    assert [f["category"] for f in rep["findings"]] == ["missing"] and rep["vectors"] is None
    assert kg("doctor", "--repair").exit_code == 1
    f = kg.tmp / "new.units"
    f.write_text("#t9 {eta} [has] {theta}\n", "utf-8")
    assert kg("ingest", str(f)).exit_code == 1
    assert journal.read_bytes() == jbytes  # not overwritten
    snap.write_bytes(saved)  # the file comes back from a backup: everything is there, vectors too
    assert kg.units() == 21
    assert kg("doctor").exit_code == 0


def test_missing_snapshot_salvage_keeps_the_journal_units(kg):
    (kg.graph / "graph.pkl").unlink()
    r = kg("doctor", "--salvage")
    assert r.exit_code == 0, r.output
    assert "3 units kept" in r.stdout
    assert kg.units() == 3  # the three journal batches; the snapshot's 18 units were in the lost file
    got = json.loads(kg("expand", "alpha", "--json").stdout)
    assert "t1" in json.dumps(got)
    assert list(kg.dir.glob("graph.damaged-*"))  # the evidence is kept


def test_damaged_journal_record_salvage_keeps_every_intact_record(kg):
    """E15: one byte flipped in a non-last journal record: every command failed, restore too, and
    nothing could be salvaged. Salvage keeps the snapshot and the other two batches."""
    journal = kg.graph / "graph.journal"
    data = journal.read_bytes()
    i = data.find("gamma".encode())  # the second of the three batches
    assert i > 0
    _flip(journal, i, 0x20)
    r = kg("stats")
    assert r.exit_code == 1 and "kg doctor --salvage" in " ".join(r.stderr.split())
    r = kg("doctor", "--salvage", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["salvaged"]["units_kept"] == 20 and out["after"]["ok"] is True
    # the lost batch (#t2) had added the nodes gamma and delta: their vectors were stray, and deleted
    stray = [f for f in out["findings"] if f["check"] == "vectors_without_nodes"]
    assert stray and sorted(stray[0]["examples"]) == ["delta", "gamma"] and out["repaired"]["vectors_deleted"] == 2
    assert any("damaged" in n for n in out["salvaged"]["notes"])
    kg("dump", str(kg.tmp / "after.jsonl"))
    good = [ln for ln in kg.unit_lines(kg.tmp / "good.jsonl") if '"id":"t2"' not in ln]
    assert kg.unit_lines(kg.tmp / "after.jsonl") == good


def test_journal_epoch_flip_is_damage_not_a_stale_journal(kg):
    """A flipped epoch made the journal look stale (from before the last compaction), and its
    batches were silently ignored."""
    journal = kg.graph / "graph.journal"
    _flip(journal, len(b"KGJOURNAL2\n") + 3, 0x01)
    r = kg("stats")
    assert r.exit_code == 1 and "damaged" in r.stderr


def test_salvage_refused_on_a_healthy_store(kg):
    r = kg("doctor", "--salvage")
    assert r.exit_code == 2 and "nothing to salvage" in r.stderr
    assert not list(kg.dir.glob("graph.damaged-*"))


def test_interrupted_swap_is_finished_on_open(kg, lexicon):
    """A crash between the swap's two renames: no store directory, a complete one beside it."""
    from kgservice.notation import parse_units
    from kgservice.stores.embedded.files import EmbeddedFiles

    units = parse_units("#x1 {iota} [has] {kappa}\n", lexicon, doc="x")
    new, _ = EmbeddedFiles(kg.dir).build_beside(units, {})
    kg.graph.rename(kg.dir / "graph.replaced-crash")
    store = EmbeddedStore(kg.graph)
    assert sorted(store.s.units) == ["x1"] and not new.exists()


def test_salvage_keeps_duplicate_aliases(kg):
    """Merged duplicates (aliases, kept in journal records and the snapshot) survive a salvage,
    so a later batch can still supersede a duplicate by its own id."""
    r = kg.ingest_text("dup.units", "#t9 {Alpha} [has] {beta}\n")
    assert "t1" in r.stdout  # reported as a duplicate of #t1
    (kg.graph / "graph.pkl").unlink()  # the journal batches remain, the alias among them
    r = kg("doctor", "--salvage")
    assert r.exit_code == 0, r.output
    assert EmbeddedStore(kg.graph).aliases() == {"t9": "t1"}
    kg.ingest_text("update.units", "#t10 {alpha} [has] {omega}\n    ()[supersedes] #t9\n")
    assert EmbeddedStore(kg.graph).superseded_end(["t1"]) == {"t1": ["t10"]}
