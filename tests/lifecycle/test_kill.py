"""kill -9 during a replacement or a forget, on both backends: afterwards exactly the old or the
new version is visible, never a mix and never neither.

A child process runs the change with ``KG_TEST_LIFECYCLE_PAUSE`` naming a point of the store's
one atomic write (just before it commits, or just after): it writes a marker file there and
waits; the test kills it with SIGKILL and reopens the store. Before the commit the old version
must be intact (Neo4j rolls the open transaction back; the embedded journal has no record of
it); after the commit the new one must be complete (Neo4j committed; the embedded journal
record is replayed although memory was never updated)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgservice.notation.serializer import format_unit
from kgservice.service import KnowledgeBase
from tests.lifecycle.pausing import kill_when_paused, pause_env

DOC = "notes/a.units"
V1 = "{cat} [is a] {mammal}\n{mammal} [has] {fur}\n{fur} [is] {warm}\n"
V2 = "{cat} [is a] {mammal}\n{mammal} [has] {scales}\n{scales} [is] {cold}\n"

CHILD = """
import sys
from kgservice.config import load_settings
from kgservice.service import KnowledgeBase

op, doc, text = sys.argv[1], sys.argv[2], sys.argv[3]
with KnowledgeBase(load_settings()) as kb:
    if op == "replace":
        kb.ingest_document(doc, text)
    else:
        kb.forget([doc])
"""


def state(kb: KnowledgeBase) -> tuple:
    """Everything a reader can see of the lifecycle: live facts, nodes, documents, history, archive."""
    return (sorted(format_unit(u, with_id=False) for u in kb.store.iter_units()),
            sorted(n.id for n in kb.store.iter_nodes()),
            [(d.id, d.version, d.units) for d in kb.store.documents()],
            [c.kind for c in kb.store.changes()],
            len(kb.store.retracted_units()),
            kb.stats()["units"])


def expected(tmp_path: Path, open_kb, op: str) -> tuple[tuple, tuple]:
    """(old, new) states, built by running the change to completion in a store of its own."""
    with open_kb(tmp_path / "ref") as kb:
        kb.ingest_document(DOC, V1)
        old = state(kb)
        if op == "replace":
            kb.ingest_document(DOC, V2)
        else:
            kb.forget([DOC])
        return old, state(kb)


@pytest.mark.parametrize("op", ["replace", "forget"])
@pytest.mark.parametrize("point", ["before-commit", "after-commit"])
def test_kill_9_during_a_change_leaves_old_or_new(tmp_path: Path, open_kb, fresh_store, backend_env,
                                                  op: str, point: str) -> None:
    old, new = expected(tmp_path, open_kb, op)
    assert old != new
    fresh_store()
    data = tmp_path / "kg"
    with open_kb(data) as kb:
        kb.ingest_document(DOC, V1)
        assert state(kb) == old
    marker = tmp_path / "paused"
    env = pause_env({**backend_env, "KG_DATA_DIR": str(data), "KG_EMBEDDER": "hash:64"}, point, marker)
    kill_when_paused(CHILD, [op, DOC, V2], env, marker, f"the {op} (pausing at {point})")
    with open_kb(data) as kb:
        got = state(kb)
        assert got == (old if point == "before-commit" else new)
        if point == "before-commit":  # nothing of it is left behind: the same change runs again
            if op == "replace":
                kb.ingest_document(DOC, V2)
            else:
                kb.forget([DOC])
            assert state(kb) == new
