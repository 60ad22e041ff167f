"""The vector store contract: every backend behind ``kgservice.vectors.base.VectorStore``
gives the same answers to the same calls.

Backends: qdrant-edge (the embedded default), qdrant-client local mode, qdrant-client in
memory, Neo4j's vector index on the test Neo4j (``KG_TEST_NEO4J_URI``, as every Neo4j test:
skipped locally without one, a failure under CI), and a Qdrant server when
``KG_TEST_QDRANT_URL`` names one (none can run on the project's own machines, so that row is
skipped there, never faked). The expected scores are
worked out by hand (4-d vectors below) or by an exact numpy scan.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from kgservice.stores.neo4j.vectors import Neo4jVectorStore
from kgservice.vectors import (
    EdgeVectorStore,
    QdrantVectorStore,
    VectorStore,
    VectorStoreLocked,
    VectorStoreMismatch,
    edge_available,
    open_vector_store,
    point_id,
)
from kgservice.vectors.base import NODE_NAMESPACE, SCROLL_PAGE

ROOT = Path(__file__).resolve().parents[2]
OFFLINE_ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
SERVER = os.environ.get("KG_TEST_QDRANT_URL")

# Hand-made 4-d vectors. Query q = (1, 0.2, 0, 0), |q| = sqrt(1.04):
#   a (1,0,0,0)   cos = 1/sqrt(1.04)              = 0.98058
#   c (1,1,0,0)   cos = 1.2/(sqrt2*sqrt1.04)      = 0.83205
#   e (1,0,1,0)   cos = 1/(sqrt2*sqrt1.04)        = 0.69338
#   b (0,1,0,0)   cos = 0.2/sqrt(1.04)            = 0.19612
#   f (0,0,0,1)   cos = 0
#   d (-1,0,0,0)  cos = -0.98058
VECS = {
    "a": [1, 0, 0, 0],
    "b": [0, 1, 0, 0],
    "c": [1, 1, 0, 0],
    "d": [-1, 0, 0, 0],
    "e": [1, 0, 1, 0],
    "f": [0, 0, 0, 1],
}
Q = np.array([1, 0.2, 0, 0], dtype=np.float32)
S = math.sqrt(1.04)
EXPECTED = [("a", 1 / S), ("c", 1.2 / (math.sqrt(2) * S)), ("e", 1 / (math.sqrt(2) * S)), ("b", 0.2 / S), ("f", 0.0)]

_edge = pytest.mark.skipif(not edge_available(), reason="qdrant-edge-py not installed")
ALL = [pytest.param("edge", marks=_edge), "qdrant", "memory", "neo4j",
       pytest.param("server", marks=pytest.mark.skipif(not SERVER, reason="no Qdrant server (KG_TEST_QDRANT_URL)"))]
ON_DISK = [pytest.param("edge", marks=_edge), "qdrant"]


def _open(backend: str, path: Path, request=None, **kw):
    kw.setdefault("dim", 4)
    kw.setdefault("model_name", "test-model")
    if backend == "neo4j":  # the shared test server: each test starts from an empty collection
        kw = {"recreate": True, "collection": "kg_nodes", **kw}
        return request.getfixturevalue("neo4j_connection").graph_vectors(**kw)
    if backend == "memory":
        return open_vector_store(backend="qdrant", **kw)
    if backend == "server":
        return open_vector_store(backend="qdrant", url=SERVER, collection=f"kg_test_{uuid.uuid4().hex[:8]}",
                                 **{"recreate": True, **kw})
    return open_vector_store(backend=backend, path=path, **kw)


def _fill(store) -> None:
    ids = list(VECS)
    payloads = [{"label": i.upper(), "kind": "entry"} for i in ids]
    store.upsert(ids, np.array([VECS[i] for i in ids], dtype=np.float32), payloads)


def _assert_hits(hits, expected):
    assert [h[0] for h in hits] == [x[0] for x in expected]
    for (_, got), (_, want) in zip(hits, expected, strict=True):
        assert got == pytest.approx(want, abs=1e-5)


@pytest.fixture(params=ALL)
def store(request, tmp_path):
    s = _open(request.param, tmp_path / "vectors", request)
    yield s
    s.close()


def test_every_backend_implements_the_protocol(store):
    assert isinstance(store, VectorStore)
    assert store.dim == 4 and store.model_name == "test-model"


def test_store_round_trip(store):
    _fill(store)
    assert store.count() == 6
    assert store.ids() == set(VECS)
    _assert_hits(store.search(Q, top_k=3), EXPECTED[:3])
    _assert_hits(store.search(Q, top_k=10), EXPECTED)  # d (negative cosine) dropped at threshold 0
    _assert_hits(store.search(Q, top_k=10, threshold=0.5), EXPECTED[:3])
    _assert_hits(store.search(Q, top_k=10, threshold=-1.0), EXPECTED + [("d", -1 / S)])
    # batched search agrees with single searches
    many = store.search_many(np.stack([Q, np.array([0, 0, 0, 1], np.float32)]), top_k=2, threshold=0.0)
    _assert_hits(many[0], EXPECTED[:2])
    assert many[1][0][0] == "f" and many[1][0][1] == pytest.approx(1.0, abs=1e-6)
    assert store.search_many(np.zeros((0, 4), np.float32)) == []

    store.delete(["c", "no-such-node"])
    assert store.ids() == set(VECS) - {"c"}
    assert store.count() == 5
    _assert_hits(store.search(Q, top_k=2), [EXPECTED[0], EXPECTED[2]])
    store.optimize()  # a no-op or an index build: the answers stay the same
    _assert_hits(store.search(Q, top_k=2), [EXPECTED[0], EXPECTED[2]])


def test_store_upsert_is_idempotent(store):
    _fill(store)
    _fill(store)
    assert store.count() == 6 and store.ids() == set(VECS)
    # replacing a node's vector moves it, it does not add a point
    store.upsert(["b"], np.array([[1, 0.25, 0, 0]], np.float32), [{"label": "B"}])
    assert store.count() == 6
    assert store.search(Q, top_k=1)[0][0] == "b"
    # duplicates in one call: the last one wins
    store.upsert(["g", "g"], np.array([[0, 0, 1, 0], [0, 0, 0, 1]], np.float32), [{}, {}])
    assert store.count() == 7
    assert np.allclose(store.get_vectors(["g"])["g"], [0, 0, 0, 1])


def test_store_point_ids_are_uuid5_of_node_id(store):
    store.upsert(["吸烟"], np.array([[0, 1, 0, 0]], np.float32), [{"label": "吸烟"}])
    pid = str(uuid.uuid5(NODE_NAMESPACE, "吸烟"))
    assert point_id("吸烟") == pid
    if isinstance(store, QdrantVectorStore):
        rec = store._client.retrieve(store.collection, ids=[pid], with_payload=True)
    elif isinstance(store, Neo4jVectorStore):
        assert store.payloads(["吸烟"]) == {"吸烟": (pid, {"label": "吸烟", "node_id": "吸烟"})}
        rec = store._conn.read("vectors_get", ids=["吸烟"])
        assert rec[0]["pid"] == pid and rec[0]["node_id"] == "吸烟"
        assert list(store.get_vectors(["吸烟", "absent"])) == ["吸烟"]
        return
    else:
        rec = store._shard.retrieve([pid], with_payload=True, with_vector=False)
    assert rec and str(rec[0].id) == pid and rec[0].payload == {"label": "吸烟", "node_id": "吸烟"}
    assert list(store.get_vectors(["吸烟", "absent"])) == ["吸烟"]


def test_point_id_is_uuid5_for_any_node_id():
    """point_id computes uuid5 itself (hashlib, faster): the same string as the uuid module
    for ASCII, CJK, astral, long and odd ids, or existing collections would lose their points."""
    rng = np.random.default_rng(17)
    ids = ["", "a", "e:cat", "吸烟", "🐈 cat", "x" * 5000, "lit:(3)", "a\x00b", "Ünïcödé spaces  "]
    ids += ["".join(chr(int(c)) for c in rng.integers(32, 0xD7FF, size=int(k))) for k in rng.integers(1, 40, 300)]
    for nid in ids:
        assert point_id(nid) == str(uuid.uuid5(NODE_NAMESPACE, nid)), nid


@pytest.mark.filterwarnings("ignore:overflow encountered")  # qdrant-client normalising row 7
def test_store_keeps_vectors_bit_identical_and_checks_values_exactly(store):
    """Whatever form upsert hands the vectors to the backend in, the stored floats are those
    of the float32 input: compared bit for bit with a copy stored from plain Python floats
    (where the backend normalises for cosine, both copies go through the same normalisation)."""
    rng = np.random.default_rng(3)
    m = rng.standard_normal((50, 4)).astype(np.float32)
    m[7] = [3e38, 3e38, 1e-40, 1]  # finite, though its sum (and sum of squares) overflows
    ids = [f"n{i}" for i in range(50)]
    store.upsert(ids, m)
    store.upsert([f"ref{i}" for i in range(50)], [[float(x) for x in row] for row in m])
    got = store.get_vectors(ids + [f"ref{i}" for i in range(50)])
    for i in range(50):
        assert got[f"n{i}"].tobytes() == got[f"ref{i}"].tobytes()
    with pytest.raises(ValueError):
        store.upsert(["x"], np.array([[1, np.inf, 0, 0]], np.float32))
    with pytest.raises(ValueError):
        store.upsert(["x"], np.array([[1e-30, 0, 0, 0]], np.float32))  # squares to zero in float32: no direction
    assert store.get_vectors(["x"]) == {}


def test_store_rejects_bad_input(store):
    with pytest.raises(ValueError):
        store.upsert(["a"], np.zeros((1, 3), np.float32), [{}])  # wrong dim
    with pytest.raises(ValueError):
        store.upsert(["a", "b"], np.ones((1, 4), np.float32), [{}, {}])  # count mismatch
    with pytest.raises(ValueError):
        store.upsert(["a"], np.zeros((1, 4), np.float32), [{}])  # zero vector
    with pytest.raises(ValueError):
        store.upsert(["a"], np.ones((1, 4), np.float32), [{"node_id": "b"}])
    with pytest.raises(ValueError):
        store.upsert(["a"], np.array([[1, np.nan, 0, 0]], np.float32), [{}])
    with pytest.raises(ValueError):
        store.search(np.ones(5, np.float32))
    assert store.count() == 0


@pytest.mark.parametrize("backend", ALL)
def test_many_points_page_and_rank_like_an_exact_scan(backend, tmp_path, request):
    """More points than one scroll page (ids, get_vectors) and top-10s equal to numpy's exact
    cosine ranking, on every backend."""
    rng = np.random.default_rng(5)
    n, dim = SCROLL_PAGE * 2 + 37, 16
    m = rng.standard_normal((n, dim)).astype(np.float32)
    ids = [f"node {i}" for i in range(n)]
    with _open(backend, tmp_path / "v", request, dim=dim) as s:
        for i in range(0, n, 700):  # several upserts, as several ingest batches do
            s.upsert(ids[i:i + 700], m[i:i + 700])
        assert s.count() == n
        assert s.ids() == set(ids)
        got = s.get_vectors(ids[::97])
        unit = m / np.linalg.norm(m, axis=1, keepdims=True)
        assert set(got) == set(ids[::97])
        assert all(np.allclose(got[k], unit[int(k.split()[1])], atol=1e-5) for k in got)
        q = rng.standard_normal((5, dim)).astype(np.float32)
        qn = q / np.linalg.norm(q, axis=1, keepdims=True)
        for row, hits in zip(qn, s.search_many(q, top_k=10, threshold=-1.0), strict=True):
            order = np.argsort(-(unit @ row))[:10]
            assert [h[0] for h in hits] == [ids[j] for j in order]
            assert [h[1] for h in hits] == pytest.approx([float(unit[j] @ row) for j in order], abs=1e-4)


@pytest.mark.parametrize("backend", ON_DISK)
def test_store_persists_and_detects_model_mismatch(tmp_path, backend):
    path = tmp_path / "vectors"

    def open_(**kw):
        return open_vector_store(backend=backend, path=path, **kw)

    with open_(dim=4, model_name="model-A") as s:
        _fill(s)
    with open_(dim=4, model_name="model-A") as s:  # same model: reopens fine
        assert s.ids() == set(VECS)
        _assert_hits(s.search(Q, top_k=3), EXPECTED[:3])
    with pytest.raises(VectorStoreMismatch) as ei:
        open_(dim=4, model_name="model-B")
    msg = str(ei.value)
    assert "model-A" in msg and "model-B" in msg and "kg doctor --repair" in msg
    with pytest.raises(VectorStoreMismatch, match="dim 4"):
        open_(dim=8, model_name="model-A")
    # the failed opens released the lock; recreate=True re-embeds from scratch
    with open_(dim=8, model_name="model-B", recreate=True) as s:
        assert s.count() == 0
    with open_(dim=8, model_name="model-B") as s:
        assert s.count() == 0
    # "auto" recognises the format already on disk
    with open_vector_store(backend="auto", path=path, dim=8, model_name="model-B") as s:
        assert type(s) is (QdrantVectorStore if backend == "qdrant" else EdgeVectorStore)


@pytest.mark.parametrize("backend", ON_DISK)
def test_flush_makes_writes_durable_and_a_clean_writer_loses_nothing(tmp_path, backend):
    """flush() (what the knowledge base calls after each batch) on every backend: idempotent,
    and a store whose writers all flushed reopens with nothing lost (tests/vectors/
    test_edge_durability.py kills a writer before its flush)."""
    path = tmp_path / "vectors"
    with open_vector_store(backend=backend, path=path, dim=4, model_name="m") as s:
        assert not s.lost_writes
        _fill(s)
        s.flush()
        s.flush()
        s.delete(["c"])
        s.flush()
        assert not s.lost_writes
    with open_vector_store(backend=backend, path=path, dim=4, model_name="m") as s:
        assert not s.lost_writes and s.ids() == set(VECS) - {"c"}
        s.recovered()  # nothing to forget: harmless
        assert s.ids() == set(VECS) - {"c"}


@pytest.mark.parametrize("backend", ON_DISK)
def test_store_locked_by_another_process(tmp_path, backend):
    path = tmp_path / "vectors"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from kgservice.vectors import open_vector_store;"
            f"s = open_vector_store(backend={backend!r}, dim=4, model_name='m', path={str(path)!r});"
            "print('ready', flush=True); sys.stdin.read(); s.close()",
        ],
        env=OFFLINE_ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(VectorStoreLocked) as ei:
            open_vector_store(backend=backend, dim=4, model_name="m", path=path)
        assert str(path) in str(ei.value)
        if backend == "edge":
            with pytest.raises(VectorStoreLocked):
                open_vector_store(backend=backend, dim=4, model_name="m", path=path, recreate=True)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    with open_vector_store(backend=backend, dim=4, model_name="m", path=path) as s:  # free again once it exits
        assert s.count() == 0


def test_auto_picks_edge_for_a_new_directory_and_keeps_an_existing_local_store(tmp_path):
    with open_vector_store(backend="qdrant", path=tmp_path / "old", dim=4, model_name="m") as s:
        _fill(s)
    with open_vector_store(backend="auto", path=tmp_path / "old", dim=4, model_name="m") as s:
        assert type(s) is QdrantVectorStore and s.count() == 6
    with open_vector_store(backend="auto", path=tmp_path / "new", dim=4, model_name="m") as s:
        assert type(s) is (EdgeVectorStore if edge_available() else QdrantVectorStore)
    with open_vector_store(backend="auto", dim=4, model_name="m") as s:  # no path: in memory
        assert type(s) is QdrantVectorStore
    with pytest.raises(ValueError, match="unknown vector backend"):
        open_vector_store(backend="faiss", path=tmp_path / "x", dim=4, model_name="m")


@pytest.mark.parametrize("backend", ON_DISK)
def test_default_embedder_with_store(tmp_path, backend):
    from kgservice.vectors import make_embedder

    e = make_embedder("default")
    if not e.available():
        pytest.fail("the default embedding package is not installed")
    labels = ["smoking", "lung cancer", "Python", "cat", "climate change", "mammal"]
    with open_vector_store(backend=backend, dim=e.dim, model_name=e.name, path=tmp_path / "q") as s:
        s.upsert(labels, e.embed(labels), [{"label": x} for x in labels])
        q = e.embed(["tobacco use", "吸烟", "global warming", "programming language"])
        top = [hits[0][0] for hits in s.search_many(q, top_k=3, threshold=0.2)]
        assert top == ["smoking", "smoking", "climate change", "Python"]
