"""A forget killed right after its commit, with the vectors in Neo4j itself
(``KG_VECTOR_BACKEND=neo4j``): the vectors of the nodes the forget removed are gone in that same
commit, so nothing is left for ``kg doctor`` to call stray (before, they were deleted in a second
step after the transaction and a kill in between left them behind)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgservice.config import Settings
from kgservice.service import KnowledgeBase
from tests.lifecycle.pausing import kill_when_paused, pause_env
from tests.neo4j_helpers import wipe_all

pytestmark = pytest.mark.neo4j

CHILD = """
import sys
from kgservice.config import load_settings
from kgservice.service import KnowledgeBase

with KnowledgeBase(load_settings()) as kb:
    kb.forget([sys.argv[1]])
"""


def neo4j_vectors_env() -> dict[str, str]:
    return {"KG_BACKEND": "neo4j", "KG_NEO4J_URI": os.environ["KG_TEST_NEO4J_URI"],
            "KG_NEO4J_USER": os.environ.get("KG_NEO4J_USER", "neo4j"),
            "NEO4J_PASSWORD": os.environ.get("NEO4J_PASSWORD", ""), "KG_VECTOR_BACKEND": "neo4j",
            "KG_EMBEDDER": "hash:64"}


def test_a_forget_killed_after_its_commit_leaves_no_stray_vector_in_neo4j(tmp_path: Path, neo4j_connection) -> None:
    wipe_all(neo4j_connection)
    env = neo4j_vectors_env()
    settings = Settings(data_dir=tmp_path / "kg", backend="neo4j", neo4j_uri=env["KG_NEO4J_URI"],
                        neo4j_user=env["KG_NEO4J_USER"], neo4j_password=env["NEO4J_PASSWORD"],
                        vector_backend="neo4j", embedder="hash:64")
    with KnowledgeBase(settings) as kb:
        kb.ingest_document("keep.units", "{cat} [is a] {mammal}\n")
        kb.ingest_document("gone.units", "{owl} [is a] {bird}\n{bird} [has] {feathers}\n")
        assert kb.vectors.ids() == {"cat", "mammal", "owl", "bird", "feathers"}
    marker = tmp_path / "paused"
    kill_when_paused(CHILD, ["gone.units"], pause_env({**env, "KG_DATA_DIR": str(tmp_path / "kg")}, "after-commit", marker),
                     marker, "the forget")
    with KnowledgeBase(settings) as kb:
        assert [d.id for d in kb.store.documents()] == ["keep.units"]  # the forget committed
        assert kb.vectors.ids() == {"cat", "mammal"}
        assert [f.line() for f in kb.doctor().findings] == []
