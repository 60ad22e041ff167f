"""A renamed workspace keeps its vectors in qdrant-client's local mode, and the same move a
Qdrant server gets (``qdrant_store.move_collection``; no server can run here, so the server
path is the same client calls against local mode).

A named workspace's collection is ``kg_nodes-ws-<name>``. Qdrant renames no collection, so
before this the renamed workspace opened ``kg_nodes-ws-<new name>``, new and empty: every
vector was lost to search until ``kg doctor --repair``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kgservice.config import Settings
from kgservice.service import KnowledgeBase
from kgservice.vectors.qdrant_store import QdrantVectorStore, move_collection

UNITS = "{cat} [is a] {mammal}\n{dog} [is a] {mammal}\n"


def _local(path: Path, collection: str) -> QdrantVectorStore:
    return QdrantVectorStore(dim=8, model_name="test:8", path=path, collection=collection)


def test_kg_workspaces_rename_keeps_the_workspace_s_vectors_in_local_mode(tmp_path: Path):
    from tests.processes import env_for, kg

    src = tmp_path / "pets.units"
    src.write_text(UNITS, "utf-8")
    env = env_for(tmp_path / "kg", KG_VECTOR_BACKEND="qdrant")
    assert kg(env, "--workspace", "team-b", "ingest", str(src)).returncode == 0

    def vectors(ws: str) -> dict[str, np.ndarray]:
        kb = KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder=env["KG_EMBEDDER"], workspace=ws,
                                    vector_backend="qdrant"))
        try:
            ids = sorted(kb.vectors.ids())
            return kb.vectors.get_vectors(ids)
        finally:
            kb.close()

    before = vectors("team-b")
    assert len(before) == 3  # cat, dog, mammal: the three labels, by hand
    moved = kg(env, "workspaces", "rename", "team-b", "blue")
    assert moved.returncode == 0, moved.stderr
    after = vectors("blue")
    assert sorted(after) == sorted(before)
    assert all(np.allclose(after[i], before[i]) for i in before)  # the same vectors, not re-embedded ones
    assert (tmp_path / "kg" / "workspaces" / "blue" / "qdrant" / "meta.json").exists()
    collections = sorted(p.name for p in (tmp_path / "kg" / "workspaces" / "blue" / "qdrant" / "collection").iterdir())
    assert collections == ["kg_nodes-ws-blue"]  # moved, the old one dropped


def test_a_move_stopped_midway_is_done_again_from_the_old_collection(tmp_path: Path):
    """Both collections present (the copy was cut short): the old one is the truth, the partial
    new one is dropped and the copy made whole."""
    vs = _local(tmp_path, "kg_nodes-ws-a")
    vs.upsert(["n1", "n2", "n3"], np.eye(3, 8, dtype=np.float32))
    vs.close()
    part = _local(tmp_path, "kg_nodes-ws-b")
    part.upsert(["n1"], np.eye(1, 8, dtype=np.float32))
    part.close()
    assert move_collection(old="kg_nodes-ws-a", new="kg_nodes-ws-b", path=tmp_path) == 3
    vs = _local(tmp_path, "kg_nodes-ws-b")
    try:
        got = vs.get_vectors(["n1", "n2", "n3"])
        assert sorted(got) == ["n1", "n2", "n3"] and np.allclose(got["n3"], np.eye(3, 8)[2])
    finally:
        vs.close()
    assert move_collection(old="kg_nodes-ws-a", new="kg_nodes-ws-b", path=tmp_path) == 0  # nothing left to move
