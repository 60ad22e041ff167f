"""A renamed workspace keeps its vectors (embedded store: qdrant-edge, and qdrant-client's local
mode, whose move is ``qdrant_store.move_collection``: tests/vectors/test_renamed_workspace_qdrant.py).

A named workspace's shard is called ``kg_nodes-ws-<name>`` and lives in the workspace's own
directory, which ``kg workspaces rename`` moves whole. Before, the renamed workspace opened
``kg_nodes-ws-<new name>``: a new, empty shard beside its real one, so every vector was lost to
search (an answer then entered the graph by its labels alone) until ``kg doctor --repair``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from kgservice.config import Settings
from kgservice.service import KnowledgeBase
from kgservice.vectors import edge_available
from kgservice.vectors.edge_store import EdgeVectorStore

needs_edge = pytest.mark.skipif(not edge_available(), reason="no qdrant-edge-py")

UNITS = "{cat} [is a] {mammal}\n{dog} [is a] {mammal}\n"


def _edge(path: Path, collection: str, *, family: str | None = "kg_nodes") -> EdgeVectorStore:
    return EdgeVectorStore(dim=8, model_name="test:8", path=path, collection=collection, family=family)


def _shard(path: Path, collection: str, ids: list[str]) -> None:
    """A flushed shard holding ``ids``, closed."""
    vs = _edge(path, collection, family=None)
    try:
        vs.upsert(ids, np.eye(len(ids), 8, dtype=np.float32))
        vs.flush()
    finally:
        vs.close()


@pytest.mark.parametrize("backend", [pytest.param("edge", marks=needs_edge), "qdrant"])
def test_kg_workspaces_rename_keeps_the_workspace_s_vectors(tmp_path: Path, backend: str):
    """Edge adopts the shard on open; local mode has its points moved by the rename. Before
    either, the renamed workspace found 0 of its 3 vectors."""
    from tests.processes import env_for, kg

    src = tmp_path / "pets.units"
    src.write_text(UNITS, "utf-8")
    env = env_for(tmp_path / "kg", KG_VECTOR_BACKEND=backend)
    assert kg(env, "--workspace", "team-b", "ingest", str(src)).returncode == 0

    def vectors(ws: str) -> dict[str, np.ndarray]:
        kb = KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder=env["KG_EMBEDDER"], workspace=ws,
                                    vector_backend=backend))
        try:
            return kb.vectors.get_vectors(sorted(kb.vectors.ids()))
        finally:
            kb.close()

    before = vectors("team-b")
    assert len(before) == 3  # cat, dog, mammal: the three labels, by hand
    moved = kg(env, "workspaces", "rename", "team-b", "blue")
    assert moved.returncode == 0, moved.stderr
    after = vectors("blue")
    assert sorted(after) == sorted(before)
    assert all(np.allclose(after[i], before[i]) for i in before)  # the same vectors, not re-embedded ones
    where = tmp_path / "kg" / "workspaces" / "blue" / "qdrant"
    names = sorted(p.name for p in (where if backend == "edge" else where / "collection").iterdir() if p.is_dir())
    assert names == ["kg_nodes-ws-blue"]  # adopted or moved, not a second one beside the old one


@needs_edge
def test_an_adoption_stopped_midway_is_finished_by_the_next_opener(tmp_path: Path):
    """Sidecar files are renamed before the shard directory: a process stopped after the first
    leaves the old directory, which the next opener still finds and renames."""
    _shard(tmp_path, "kg_nodes-ws-a", ["n1", "n2"])
    os.rename(tmp_path / "kg_nodes-ws-a.kg.json", tmp_path / "kg_nodes-ws-b.kg.json")  # the first step only
    vs = _edge(tmp_path, "kg_nodes-ws-b")
    try:
        assert vs.ids() == {"n1", "n2"}
    finally:
        vs.close()
    assert not (tmp_path / "kg_nodes-ws-a").exists()


@needs_edge
def test_a_shard_left_unflushed_is_still_seen_as_lost_writes_after_the_rename(tmp_path: Path):
    """The marker of writes that never reached a flush follows the shard, so the knowledge base
    still embeds those nodes again (it would not, were the marker left under the old name)."""
    _shard(tmp_path, "kg_nodes-ws-a", ["n1"])
    (tmp_path / "kg_nodes-ws-a.unflushed").touch()  # as a writer killed before its flush leaves it
    vs = _edge(tmp_path, "kg_nodes-ws-b")
    try:
        assert vs.lost_writes and vs.ids() == {"n1"}
    finally:
        vs.close()


@needs_edge
def test_two_candidate_shards_are_left_alone(tmp_path: Path):
    """Which of two former names is meant cannot be told: neither is taken, both stay whole."""
    _shard(tmp_path, "kg_nodes-ws-a", ["n1"])
    _shard(tmp_path, "kg_nodes-ws-c", ["n2"])
    _shard(tmp_path, "other", ["n3"])  # another family is never a candidate
    vs = _edge(tmp_path, "kg_nodes-ws-b")
    try:
        assert vs.count() == 0
    finally:
        vs.close()
    for name in ("kg_nodes-ws-a", "kg_nodes-ws-c", "other"):
        assert (tmp_path / name / "edge_config.json").exists()


@needs_edge
def test_a_shard_of_another_family_is_not_adopted(tmp_path: Path):
    _shard(tmp_path, "mine-ws-a", ["n1"])
    vs = _edge(tmp_path, "kg_nodes-ws-b")
    try:
        assert vs.count() == 0
    finally:
        vs.close()
    assert (tmp_path / "mine-ws-a" / "edge_config.json").exists()
