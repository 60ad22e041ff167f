"""The lifecycle tests run on both graph backends: ``open_kb(path, **settings)`` opens a knowledge
base at ``path`` on the backend of the test's parameter (Neo4j: the session's server, wiped
when the test starts, so reopening at the same path is reopening the same store), and
``backend_env`` is the same choice as environment variables (for the CLI and subprocesses)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kgservice.config import Settings
from kgservice.service import KnowledgeBase
from tests.neo4j_helpers import wipe_all


@pytest.fixture(params=["embedded", "neo4j"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "neo4j":
        wipe_all(request.getfixturevalue("neo4j_connection"))
    return str(request.param)


@pytest.fixture
def backend_env(backend: str) -> dict[str, str]:
    if backend == "embedded":
        return {"KG_BACKEND": "embedded", "KG_VECTOR_BACKEND": "edge"}
    return {"KG_BACKEND": "neo4j", "KG_NEO4J_URI": os.environ["KG_TEST_NEO4J_URI"],
            "KG_NEO4J_USER": os.environ.get("KG_NEO4J_USER", "neo4j"),
            "NEO4J_PASSWORD": os.environ.get("NEO4J_PASSWORD", ""), "KG_VECTOR_BACKEND": "edge"}


@pytest.fixture
def open_kb(backend: str) -> Callable[..., KnowledgeBase]:
    def _open(path: Path, **over: Any) -> KnowledgeBase:
        over.setdefault("embedder", "hash:64")
        over.setdefault("vector_backend", "edge")
        if backend == "neo4j":
            over |= {"backend": "neo4j", "neo4j_uri": os.environ["KG_TEST_NEO4J_URI"],
                     "neo4j_user": os.environ.get("KG_NEO4J_USER", "neo4j"),
                     "neo4j_password": os.environ.get("NEO4J_PASSWORD")}
        return KnowledgeBase(Settings(data_dir=path, **over))

    return _open


@pytest.fixture
def fresh_store(backend: str, request: pytest.FixtureRequest) -> Callable[[], None]:
    """Empties the Neo4j database (a "new store" at another path is the same server); a no-op
    on the embedded store, where another path is another store."""
    def _fresh() -> None:
        if backend == "neo4j":
            wipe_all(request.getfixturevalue("neo4j_connection"))

    return _fresh
