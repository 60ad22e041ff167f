"""How the ``neo4j`` vector backend writes its index: a bulk load builds it in one population,
``rebuild_index`` does the same for a fragmented one, and searches stay exact while it is absent.

Every expected neighbour list is an exact numpy scan of the same vectors (worked out here, not
read back from the store). On the real test Neo4j (``KG_TEST_NEO4J_URI``).

* a load at least ``bulk_min`` big and at least the stored count drops the index first and
  creates it again at the end (the index is absent inside the block, online after it);
  searches inside the block, from this store and from a second connection, return the exact
  top-k (the scan), and after it the index's answers;
* a load smaller than what is stored keeps the index (never dropped);
* a load that fails part-way still gets its index back, with the vectors written before the
  failure in it;
* a writer killed (SIGKILL) in the middle of a bulk load leaves the vectors and no index: a
  reader still gets exact answers, and the next writable open creates the index again;
* ``rebuild_index`` reports the vectors it indexed and leaves an online index;
* ``KnowledgeBase.embed_nodes`` goes through the bulk path for a first load (the index is
  re-created, not updated per write), and ``kg doctor --repair`` rebuilds the index;
* ``KG_NEO4J_VECTOR_CANDIDATES`` reaches the store; a value out of range is a configuration error.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from kgservice.config import ConfigError, Settings, load_settings
from kgservice.stores.neo4j.vectors import INDEX_NAME, Neo4jVectorStore
from tests.neo4j_helpers import wipe_all

pytestmark = pytest.mark.neo4j
ROOT = Path(__file__).resolve().parents[2]
DIM = 16


def _vectors(n: int, seed: int = 3) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return [f"n{i:04d}" for i in range(n)], m


def _exact(ids: list[str], m: np.ndarray, q: np.ndarray, k: int) -> list[str]:
    unit = m / np.linalg.norm(m, axis=1, keepdims=True)
    qn = q / np.linalg.norm(q)
    return [ids[j] for j in np.argsort(-(unit @ qn), kind="stable")[:k]]


def _index_present(conn) -> bool:
    return bool(conn.read("vectors_index_info", index=INDEX_NAME))


@pytest.fixture
def store(neo4j_connection):
    wipe_all(neo4j_connection)
    vs = Neo4jVectorStore(neo4j_connection, dim=DIM, model_name="bulk-test", recreate=True, bulk_min=50,
                          candidates=200)
    yield vs
    vs.close()


def test_a_big_first_load_is_indexed_once_and_searches_stay_exact_meanwhile(store, neo4j_connection):
    from kgservice.stores.neo4j import Neo4jStore

    ids, m = _vectors(300)
    q = np.random.default_rng(9).standard_normal((3, DIM)).astype(np.float32)
    assert _index_present(neo4j_connection)
    other = Neo4jStore.connect(uri=os.environ["KG_TEST_NEO4J_URI"], password=os.environ.get("NEO4J_PASSWORD"),
                               user=os.environ.get("KG_NEO4J_USER", "neo4j"))
    reader = Neo4jVectorStore(other, dim=DIM, model_name="bulk-test", owns_connection=True)
    try:
        with store.bulk_load(len(ids)) as rebuilt:
            assert rebuilt is True
            assert not _index_present(neo4j_connection)  # dropped: no per-transaction index upkeep
            store.upsert(ids[:200], m[:200])
            for row in q:  # no index: both the writer and another connection scan exactly
                want = _exact(ids[:200], m[:200], row, 5)
                assert [h[0] for h in store.search(row, top_k=5)] == want
                assert [h[0] for h in reader.search(row, top_k=5)] == want
            store.upsert(ids[200:], m[200:])
        assert _index_present(neo4j_connection)
        state = neo4j_connection.read("vectors_index_info", index=INDEX_NAME)[0]["state"]
        assert state == "ONLINE"
        assert store.count() == 300
        for row in q:  # 200 candidates over 300 vectors: the index's top 5 is the exact one
            assert [h[0] for h in reader.search(row, top_k=5)] == _exact(ids, m, row, 5)
    finally:
        reader.close()


def test_a_load_smaller_than_the_collection_keeps_the_index(store, neo4j_connection):
    ids, m = _vectors(120)
    store.upsert(ids[:100], m[:100])
    with store.bulk_load(60) as rebuilt:  # >= bulk_min, but fewer than the 100 stored
        assert rebuilt is False
        assert _index_present(neo4j_connection)
        store.upsert(ids[100:], m[100:])
    assert _index_present(neo4j_connection) and store.count() == 120
    assert store.search(m[110], top_k=1)[0][0] == ids[110]
    with store.bulk_load(10) as rebuilt:  # below bulk_min
        assert rebuilt is False


def test_a_failed_bulk_load_gets_its_index_back(store, neo4j_connection):
    ids, m = _vectors(100)
    with pytest.raises(RuntimeError, match="model died"):
        with store.bulk_load(100):
            store.upsert(ids[:70], m[:70])
            raise RuntimeError("model died")
    assert _index_present(neo4j_connection)
    assert neo4j_connection.read("vectors_index_info", index=INDEX_NAME)[0]["state"] == "ONLINE"
    assert store.count() == 70
    assert [h[0] for h in store.search(m[5], top_k=3)] == _exact(ids[:70], m[:70], m[5], 3)


def test_writer_killed_during_a_bulk_load_leaves_exact_search_and_the_next_writer_reindexes(
        store, neo4j_connection, tmp_path):
    ids, m = _vectors(120)
    np.save(tmp_path / "m.npy", m)
    child = textwrap.dedent(f"""
        import os, sys, time
        import numpy as np
        from kgservice.stores.neo4j import Neo4jStore
        from kgservice.stores.neo4j.vectors import Neo4jVectorStore
        conn = Neo4jStore.connect(uri=os.environ["KG_TEST_NEO4J_URI"], password=os.environ.get("NEO4J_PASSWORD"),
                                  user=os.environ.get("KG_NEO4J_USER", "neo4j"))
        vs = Neo4jVectorStore(conn, dim={DIM}, model_name="bulk-test", bulk_min=50)
        m = np.load({str(tmp_path / "m.npy")!r})
        ids = [f"n{{i:04d}}" for i in range(len(m))]
        with vs.bulk_load(len(ids)):
            vs.upsert(ids[:80], m[:80])
            print("written", flush=True)
            time.sleep(600)  # killed here: the index is dropped and not yet created again
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "written"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not _index_present(neo4j_connection)
    assert store.count() == 80  # every committed write is there
    for row in m[:3]:  # the index is gone: the scan answers, exactly
        assert [h[0] for h in store.search(row, top_k=4)] == _exact(ids[:80], m[:80], row, 4)
    reopened = Neo4jVectorStore(neo4j_connection, dim=DIM, model_name="bulk-test", candidates=200)
    assert _index_present(neo4j_connection)
    assert neo4j_connection.read("vectors_index_info", index=INDEX_NAME)[0]["state"] == "ONLINE"
    assert [h[0] for h in reopened.search(m[7], top_k=4)] == _exact(ids[:80], m[:80], m[7], 4)


def test_rebuild_index_indexes_every_stored_vector_in_one_population(store, neo4j_connection):
    ids, m = _vectors(150)
    for i in range(0, 150, 10):  # fifteen small write transactions (fifteen Lucene segments)
        store.upsert(ids[i:i + 10], m[i:i + 10])
    done = store.rebuild_index()
    assert done["vectors"] == 150 and done["seconds"] >= 0
    assert neo4j_connection.read("vectors_index_info", index=INDEX_NAME)[0]["state"] == "ONLINE"
    q = np.random.default_rng(4).standard_normal(DIM).astype(np.float32)
    assert [h[0] for h in store.search(q, top_k=6)] == _exact(ids, m, q, 6)


def _kb_settings(tmp_path: Path, **over) -> Settings:
    return Settings(data_dir=tmp_path, backend="neo4j", neo4j_uri=os.environ["KG_TEST_NEO4J_URI"],
                    neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"), neo4j_password=os.environ.get("NEO4J_PASSWORD"),
                    embedder="hash:16", vector_backend="neo4j", **over)


def test_embed_nodes_loads_in_bulk_and_doctor_repair_rebuilds_the_index(neo4j_connection, tmp_path, monkeypatch):
    from kgservice.admin import doctor
    from kgservice.service import KnowledgeBase

    wipe_all(neo4j_connection)
    drops: list[str] = []
    real_write = type(neo4j_connection).write

    def spy(self, name, **params):
        if name == "vectors_index_drop":
            drops.append(name)
        return real_write(self, name, **params)

    monkeypatch.setattr(type(neo4j_connection), "write", spy)
    units = "".join(f"#w{i} {{widget {i}}} [belongs to] {{gadget {i % 3}}}\n" for i in range(12))
    with KnowledgeBase(_kb_settings(tmp_path, neo4j_vector_candidates=7)) as kb:
        kb.reopen_vectors(recreate=True)
        assert kb.vectors.candidates == 7
        kb.vectors.bulk_min = 5  # this small corpus counts as a big first load here
        drops.clear()
        report = kb.ingest_notation(units, doc="w.units")
        assert report.units_added == 12
        assert drops == ["vectors_index_drop"]  # one drop, one population: 15 new nodes >= bulk_min
        assert _index_present(neo4j_connection) and kb.vectors.count() == 15
        assert kb.vector_entry("widget 4", top_k=1, threshold=0.0)[0].node_id == "widget 4"
        fixed = doctor.repair(kb)
        assert fixed.repaired["vector_index_rebuilt"]["vectors"] == 15
        assert fixed.after.ok


def test_vector_candidates_setting_is_checked():
    neo = {"KG_BACKEND": "neo4j", "KG_NEO4J_URI": "bolt://127.0.0.1:7687", "NEO4J_PASSWORD": "x",
           "KG_VECTOR_BACKEND": "neo4j"}
    assert load_settings(env={**neo, "KG_NEO4J_VECTOR_CANDIDATES": "40"}).neo4j_vector_candidates == 40
    with pytest.raises(ConfigError, match="KG_NEO4J_VECTOR_CANDIDATES"):
        load_settings(env={**neo, "KG_NEO4J_VECTOR_CANDIDATES": "0"})
