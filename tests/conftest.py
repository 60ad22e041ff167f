"""Shared fixtures. The `store` fixture runs every contract test on both backends.

Neo4j tests need the real server that `scripts/neo4j start` brings up (`.ci/run` does
this). Locally, without KG_TEST_NEO4J_URI, they are skipped with a reason; under CI
(CI=true) a missing server is a failure, never a silent skip.
"""

from __future__ import annotations

from tests.neo4j_helpers import wipe_all
import os
from pathlib import Path

import pytest

from kgservice.families import Lexicon
from kgservice.notation import parse_units

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def lexicon() -> Lexicon:
    return Lexicon.load()


def _neo4j_params() -> dict[str, str] | None:
    uri = os.environ.get("KG_TEST_NEO4J_URI")
    if not uri:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but KG_TEST_NEO4J_URI is unset: .ci/run must start Neo4j")
        pytest.skip("no Neo4j: set KG_TEST_NEO4J_URI (and NEO4J_PASSWORD) after `scripts/neo4j start`")
    return {"uri": uri, "user": os.environ.get("KG_NEO4J_USER", "neo4j"), "password": os.environ.get("NEO4J_PASSWORD", "")}


@pytest.fixture(scope="session")
def neo4j_connection():
    params = _neo4j_params()
    from kgservice.stores.neo4j import Neo4jStore

    # "check": a database a failed test left needing `kg migrate` is still opened, to be wiped
    store = Neo4jStore.connect(**params, schema_mode="check")
    yield store
    store.close()


@pytest.fixture(params=["embedded", "neo4j"])
def store(request, tmp_path: Path):
    """A fresh, empty store of each backend."""
    if request.param == "embedded":
        from kgservice.stores.embedded import EmbeddedStore

        s = EmbeddedStore(tmp_path / "graph")
        yield s
        s.close()
    else:
        s = request.getfixturevalue("neo4j_connection")
        wipe_all(s)
        yield s


@pytest.fixture(params=["embedded", "neo4j"])
def bare_kb(request, tmp_path: Path):
    """An empty knowledge base on each graph backend, with the hash embedder and the in-process
    vector store (no model, no Qdrant): the test ingests what it needs."""
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

    over = {}
    if request.param == "neo4j":
        wipe_all(request.getfixturevalue("neo4j_connection"))
        over = {"backend": "neo4j", "neo4j_uri": os.environ["KG_TEST_NEO4J_URI"],
                "neo4j_user": os.environ.get("KG_NEO4J_USER", "neo4j"), "neo4j_password": os.environ.get("NEO4J_PASSWORD")}
    k = KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="edge", **over))
    yield k
    k.close()


@pytest.fixture
def ingest(store, lexicon):
    def _ingest(text: str, doc: str = "test.units"):
        return store.ingest(parse_units(text, lexicon, doc=doc))

    return _ingest
