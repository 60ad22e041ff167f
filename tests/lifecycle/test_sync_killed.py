"""A ``kg sync`` killed midway, on both backends: each document is one atomic change, so the sync
leaves the documents before the kill new and the rest old; the same sync run again converges to
what one uninterrupted run gives, and the vectors the killed run owed (new nodes of a document
committed just before the kill) are embedded by that next run, not left for ``kg doctor``.

Also what ``kg sync`` reports: a document replaced is "changed" even when it was first ingested
from another folder, and ``--no-delete`` names the documents it kept although their files are
gone."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kgservice.cli.app import app as cli
from tests.lifecycle.pausing import kill_when_paused, pause_env
from tests.lifecycle.test_kill import state

CHILD = """
import sys
from kgservice.config import load_settings
from kgservice.service import KnowledgeBase

with KnowledgeBase(load_settings()) as kb:
    kb.sync(sys.argv[1])
"""


def write(folder: Path, files: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.units"):
        old.unlink()
    for name, text in files.items():
        (folder / name).write_text(text, "utf-8")


V1 = {"a.units": "{cat} [is a] {mammal}\n{mammal} [has] {fur}\n"}
V2 = {"a.units": "{cat} [is a] {mammal}\n{mammal} [has] {scales}\n{scales} [feel] {cold}\n",
      "b.units": "{dog} [is a] {mammal}\n{dog} [chases] {cat}\n"}


def killed_sync(folder: Path, data: Path, backend_env: dict[str, str], marker: Path) -> None:
    """``kb.sync(folder)`` in a child that pauses just after its first change commits (before that
    change's new nodes are embedded) and is killed there with SIGKILL."""
    env = pause_env({**backend_env, "KG_DATA_DIR": str(data), "KG_EMBEDDER": "hash:64"}, "after-commit", marker)
    kill_when_paused(CHILD, [str(folder)], env, marker, "the sync")


def test_a_killed_sync_run_again_converges_and_embeds_what_the_killed_one_owed(
        tmp_path: Path, open_kb, fresh_store, backend_env) -> None:
    folder = tmp_path / "notes"
    write(folder, V1)
    with open_kb(tmp_path / "ref") as kb:  # the reference: one uninterrupted sync of V2 after V1
        kb.sync(folder)
        write(folder, V2)
        kb.sync(folder)
        want = state(kb)
    fresh_store()
    write(folder, V1)
    data = tmp_path / "kg"
    with open_kb(data) as kb:
        kb.sync(folder)
    write(folder, V2)
    killed_sync(folder, data, backend_env, tmp_path / "paused")
    with open_kb(data) as kb:
        # a.units is replaced (its own change committed), b.units is not there yet: each whole
        assert [(d.id, d.version) for d in kb.store.documents()] == [("a.units", 2)]
        missing = {f.check: f.count for f in kb.doctor().findings}
        # scales and cold committed, never embedded; fur gone from the graph, its vector not deleted
        assert missing == {"nodes_without_vectors": 2, "vectors_without_nodes": 1}
        rep = kb.sync(folder)
        assert (rep.added, rep.changed, rep.unchanged) == (["b.units"], [], ["a.units"])
        assert state(kb)[:3] == want[:3]  # live facts, nodes, documents: as the uninterrupted run
        assert [f.line() for f in kb.doctor().findings] == []


def test_a_sync_with_nothing_left_to_do_still_embeds_what_a_killed_one_owed(
        tmp_path: Path, open_kb, backend_env) -> None:
    folder = tmp_path / "notes"
    write(folder, V1)
    data = tmp_path / "kg"
    with open_kb(data) as kb:
        kb.sync(folder)
    write(folder, {"a.units": V2["a.units"]})  # one change only: the kill comes after the last commit
    killed_sync(folder, data, backend_env, tmp_path / "paused")
    with open_kb(data) as kb:
        assert {f.check for f in kb.doctor().findings} == {"nodes_without_vectors", "vectors_without_nodes"}
        rep = kb.sync(folder)
        assert (rep.added, rep.changed, rep.unchanged) == ([], [], ["a.units"])
        assert [f.line() for f in kb.doctor().findings] == []
        assert "scales" in [h.node_id for h in kb.vector_entry("scales", threshold=0.0)]  # a vector hit again


def test_sync_reports_a_replaced_document_as_changed_and_names_what_no_delete_kept(tmp_path: Path) -> None:
    data = tmp_path / "kg"

    def kg(*args: str) -> str:
        res = CliRunner().invoke(cli, ["--data-dir", str(data), "--embedder", "hash:64", *args])
        assert res.exit_code == 0, res.output
        return res.output

    first, second = tmp_path / "first", tmp_path / "second"
    write(first, {"a.units": "{cat} [is a] {mammal}\n", "gone.units": "{owl} [is a] {bird}\n"})
    write(second, {"a.units": "{cat} [is a] {pet}\n"})
    kg("sync", str(first))
    # a.units came from `first`; syncing `second`, which has another a.units, replaces it
    assert kg("sync", str(second)).splitlines()[-1] == "0 added, 1 changed, 0 forgotten, 0 unchanged"
    (first / "gone.units").unlink()
    lines = kg("sync", str(first), "--no-delete").splitlines()
    assert "kept: gone.units" in lines
    assert lines[-1] == ("0 added, 1 changed, 0 forgotten, 0 unchanged, 1 kept although their files are gone "
                         "(--no-delete)")
    assert [d["id"] for d in json.loads(kg("docs", "list", "--json"))] == ["a.units", "gone.units"]
