"""The move that keeps a renamed workspace's vectors in qdrant-client's local mode and on a Qdrant
server (``qdrant_store.move_collection``; no server can run here, so the server path is the same
client calls against local mode). The rename through the CLI: tests/vectors/test_renamed_workspace.py.

A named workspace's collection is ``kg_nodes-ws-<name>``. Qdrant renames no collection, so
before this the renamed workspace opened ``kg_nodes-ws-<new name>``, new and empty: every
vector was lost to search until ``kg doctor --repair``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kgservice.vectors.qdrant_store import QdrantVectorStore, move_collection


def _local(path: Path, collection: str) -> QdrantVectorStore:
    return QdrantVectorStore(dim=8, model_name="test:8", path=path, collection=collection)


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
