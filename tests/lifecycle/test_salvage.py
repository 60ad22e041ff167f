"""``kg doctor --salvage`` keeps the lifecycle (embedded store): documents, retracted units and
the history come back from the snapshot and the intact journal records replayed in order, so a
retracted unit stays retracted (it is not revived by the record that once added it) and every
change can still be undone afterwards."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.config import Settings
from kgservice.notation import parse_units
from kgservice.service import KnowledgeBase
from kgservice.stores.embedded import EmbeddedStore

V1 = "{cat} [is a] {mammal}\n{mammal} [has] {fur}\n"
V2 = "{cat} [is a] {mammal}\n{mammal} [has] {scales}\n"


def kb_at(d: Path) -> KnowledgeBase:
    return KnowledgeBase(Settings(data_dir=d, embedder="hash:64", vector_backend="edge"))


def life(kb: KnowledgeBase) -> tuple:
    return (sorted(u.id for u in kb.store.iter_units()), [d.model_dump() for d in kb.store.documents()],
            sorted(kb.store.retracted_units()), [c.model_dump() for c in kb.store.changes()])


def story(kb: KnowledgeBase) -> dict[str, str]:
    kb.ingest_document("a.units", V1)
    kb.ingest_document("b.units", "{owl} [is a] {bird}\n{owl} [eats] {mice}\n")
    kb.ingest_document("c.units", "{ant} [is a] {insect}\n")
    kb.ingest_document("a.units", V2)
    mice = next(u.id for u in kb.store.iter_units() if u.args[0].node == "mice")
    retract = kb.retract([mice], reason="owls eat voles here")
    forget = kb.forget(["c.units"])
    return {"retract": retract.change or "", "forget": forget.change or ""}


def salvage(data: Path, *extra: str) -> dict:
    r = CliRunner().invoke(app, ["--data-dir", str(data), "--embedder", "hash:64", "doctor", "--salvage", "--json",
                                 *extra], env={"KG_VECTOR_BACKEND": "edge"})
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_salvage_from_the_journal_alone_keeps_the_lifecycle(tmp_path: Path) -> None:
    data = tmp_path / "kg"
    with kb_at(data) as kb:
        kb.ingest_units(parse_units("#z0 {zebra} [has] {stripes}\n", kb.lexicon, doc="z.units"))
    EmbeddedStore(data / "graph").compact()
    with kb_at(data) as kb:
        ids = story(kb)
        before = life(kb)
    assert len(before[2]) == 3 and len(before[3]) == 6  # fur, mice, ant retracted; six changes
    (data / "graph" / "graph.pkl").unlink()  # lost: z0; every change is in the journal
    out = salvage(data)
    assert any(n.startswith("lifecycle:") for n in out["salvaged"]["notes"])
    with kb_at(data) as kb:
        assert life(kb) == ([u for u in before[0] if u != "z0"], *before[1:])
        kb.undo(ids["forget"])
        kb.undo(ids["retract"])
        assert {"insect", "mice"} <= {a.node for u in kb.store.iter_units() for a in u.args}


def test_salvage_keeps_the_snapshot_lifecycle_and_later_records(tmp_path: Path) -> None:
    data = tmp_path / "kg"
    with kb_at(data) as kb:
        ids = story(kb)
    EmbeddedStore(data / "graph").compact()  # the lifecycle so far is in the snapshot
    with kb_at(data) as kb:
        kb.ingest_units(parse_units("#z1 {zebra} [has] {stripes}\n", kb.lexicon, doc="z.units"))
        kb.undo(ids["forget"])  # a lifecycle record in the journal, after the snapshot
        before = life(kb)
    journal = data / "graph" / "graph.journal"
    raw = bytearray(journal.read_bytes())
    i = raw.find(b"zebra")
    assert i > 0
    raw[i] ^= 0x20  # the plain batch's record is damaged: it is lost, the rest is kept
    journal.write_bytes(bytes(raw))
    salvage(data)
    with kb_at(data) as kb:
        got = life(kb)
    assert got[0] == [u for u in before[0] if u != "z1"]
    assert got[1:] == before[1:]


def test_salvage_keeps_a_unit_superseding_a_retracted_one(tmp_path: Path) -> None:
    """A live unit that supersedes a retracted (archived) unit refers to a known unit, not a
    missing one: salvage keeps it, and an undo of the retraction links the two again."""
    data = tmp_path / "kg"
    with kb_at(data) as kb:
        kb.ingest_units(parse_units("#z1 {zebra} [has] {stripes}\n", kb.lexicon, doc="z.units"))
        kb.ingest_document("a.units", "#x1 {a} [has] {b}\n")
        kb.ingest_document("b.units", "#x2 {a} [has] {c}\n    ()[supersedes] #x1\n")
        gone = kb.retract(["x1"], "wrong")
        before = life(kb)
    journal = data / "graph" / "graph.journal"
    raw = bytearray(journal.read_bytes())
    i = raw.find(b"zebra")
    assert i > 0
    raw[i] ^= 0x20  # the first batch's record is damaged: salvage has something to do
    journal.write_bytes(bytes(raw))
    out = salvage(data)
    assert out["salvaged"]["units_dropped_dangling"] == []
    with kb_at(data) as kb:
        got = life(kb)
        assert got[0] == [u for u in before[0] if u != "z1"] == ["x2"]
        assert got[1:] == before[1:] and got[2] == ["x1"]
        kb.undo(gone.change)
        assert kb.store.superseded_end(["x1"]) == {"x1": ["x2"]}
