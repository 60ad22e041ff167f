"""The ``neo4j`` vector backend in a deployment: vectors live in the graph database, so every
process of a team setup searches the same ones, and nothing refuses it.

* configuration: ``KG_VECTOR_BACKEND=neo4j`` needs the Neo4j graph backend and no second vector
  store (exit-2 configuration errors otherwise); the placement says shared, and
  ``kg serve`` / ``kg worker`` accept it without ``KG_SINGLE_PROCESS``;
* two knowledge bases on one Neo4j (as two servers would be): what one ingests, the other finds
  by vector search, the same hits; ``kg doctor`` finds them consistent;
* real processes: two ``kg serve`` on the test Neo4j with no vector URL and no single-process
  flag both start, report the same shared vectors in ``/readyz`` and answer ``/v1/search`` alike
  after a ``kg ingest`` from a third process.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from kgservice.config import ConfigError, Settings, load_settings
from kgservice.deployment import require_shared_vectors, vector_placement
from kgservice.service import KnowledgeBase
from kgservice.stores.neo4j.vectors import Neo4jVectorStore
from tests.neo4j_helpers import wipe_all
from tests.processes import env_for, kg, new_key, serving
from tests.server.conftest import CORPUS


def test_neo4j_vectors_need_the_neo4j_graph_and_no_second_vector_store():
    neo = {"KG_BACKEND": "neo4j", "KG_NEO4J_URI": "bolt://127.0.0.1:7687", "NEO4J_PASSWORD": "x"}
    with pytest.raises(ConfigError, match="KG_BACKEND=neo4j"):
        load_settings(env={"KG_VECTOR_BACKEND": "neo4j"})
    with pytest.raises(ConfigError, match="two vector stores"):
        load_settings(env={**neo, "KG_VECTOR_BACKEND": "neo4j", "KG_QDRANT_URL": "http://127.0.0.1:6333"})
    with pytest.raises(ConfigError, match="auto, qdrant, edge or neo4j"):
        load_settings(env={"KG_VECTOR_BACKEND": "faiss"})
    settings = load_settings(env={**neo, "KG_VECTOR_BACKEND": "neo4j"})
    placement = vector_placement(settings)
    assert placement.shared and "127.0.0.1:7687" in placement.location and "Neo4j vector index" in placement.location
    require_shared_vectors(settings, "kg serve")  # accepted: no KG_SINGLE_PROCESS, no KG_QDRANT_URL
    # the default stays a local directory, refused for a multi-process Neo4j deployment, and the
    # refusal names the neo4j backend as one fix
    local = load_settings(env=neo)
    assert not vector_placement(local).shared
    with pytest.raises(ConfigError, match="KG_VECTOR_BACKEND=neo4j"):
        require_shared_vectors(local, "kg serve")


def _settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, backend="neo4j", neo4j_uri=os.environ["KG_TEST_NEO4J_URI"],
                    neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"),
                    neo4j_password=os.environ.get("NEO4J_PASSWORD"), embedder="hash:64", vector_backend="neo4j")


@pytest.mark.neo4j
def test_two_knowledge_bases_on_one_neo4j_search_the_same_vectors(tmp_path, neo4j_connection):
    from kgservice.admin.doctor import check

    wipe_all(neo4j_connection)
    with KnowledgeBase(_settings(tmp_path / "a")) as a, KnowledgeBase(_settings(tmp_path / "b")) as b:
        a.reopen_vectors(recreate=True)  # a fresh collection for this embedder (the test Neo4j is shared)
        a.ingest_notation(CORPUS, doc="corpus.units")
        assert isinstance(b.vectors, Neo4jVectorStore)
        assert b.vectors.ids() == a.vectors.ids() and "smoking" in b.vectors.ids()
        hits_a = [(h.node_id, round(h.score, 5)) for h in a.vector_entry("smoking", top_k=3, threshold=0.0)]
        hits_b = [(h.node_id, round(h.score, 5)) for h in b.vector_entry("smoking", top_k=3, threshold=0.0)]
        assert hits_a == hits_b and hits_b[0][0] == "smoking"
        # b writes, a sees it at once: nothing is per process
        b.ingest_notation("#z1 {zebrafish} [has] {fins}\n", doc="more.units")
        assert a.vector_entry("zebrafish", top_k=1, threshold=0.0)[0].node_id == "zebrafish"
        report = check(b)
        assert report.ok, [f.line() for f in report.findings]
        assert report.vector_placement["shared"] is True
        assert report.vectors == len(a.vectors.ids())
    assert not (tmp_path / "a" / "qdrant").exists() and not (tmp_path / "b" / "qdrant").exists()


@pytest.mark.neo4j
def test_two_servers_without_a_vector_url_share_neo4j_vectors(tmp_path, neo4j_connection):
    wipe_all(neo4j_connection)
    common = {"KG_NEO4J_URI": os.environ["KG_TEST_NEO4J_URI"], "KG_BACKEND": "neo4j",
              "NEO4J_PASSWORD": os.environ.get("NEO4J_PASSWORD", ""), "KG_VECTOR_BACKEND": "neo4j"}
    env_a, env_b, env_c = (env_for(tmp_path / name, **common) for name in ("a", "b", "c"))
    for env in (env_a, env_b, env_c):
        env.pop("KG_SINGLE_PROCESS", None)
        env.pop("KG_QDRANT_URL", None)
    (tmp_path / "corpus.units").write_text(CORPUS, "utf-8")
    with KnowledgeBase(load_settings(env=env_c)) as kb:
        kb.reopen_vectors(recreate=True)  # this embedder's collection, whatever the last test left
    assert kg(env_c, "ingest", str(tmp_path / "corpus.units")).returncode == 0
    h = {"X-API-Key": new_key(env_c, "rita", "reader")}
    with serving(env_a) as (a, _, _), serving(env_b) as (b, _, _):
        ready = [httpx.get(base + "/readyz").json()["vectors"] for base in (a, b)]
        assert ready[0] == ready[1] and ready[0]["shared"] is True, ready
        found = [httpx.post(base + "/v1/search", json={"query": "lung cancer", "top_k": 3, "threshold": 0.0},
                            headers=h) for base in (a, b)]
        assert all(r.status_code == 200 for r in found), [r.text for r in found]
        assert found[0].json() == found[1].json() and found[0].json()[0]["node_id"] == "lung cancer"
    assert not any((tmp_path / name / "qdrant").exists() for name in ("a", "b", "c"))
