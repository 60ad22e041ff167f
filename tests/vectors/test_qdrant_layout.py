"""A Qdrant collection for a cluster: the shard, replica, write-consistency and quantization
settings reach the server when the collection is created, and writes ask for strong ordering.

No Qdrant server can run on the project's machines (no Docker, no server binary in the package
registries), so this checks the requests on the wire: the client talks to a loopback HTTP
endpoint that records them and answers as Qdrant's REST API does. The expected bodies and
query parameters are written from Qdrant's API reference (PUT /collections/{name}: shard_number,
replication_factor, write_consistency_factor, quantization_config, vectors.on_disk; points
upsert and delete: ?wait=true&ordering=strong), not read back from the code. What a real
cluster then does with them (placement, replication, failover) is not tested here. The same
calls against qdrant-client's local mode and qdrant-edge are the contract tests
(tests/vectors/test_store_contract.py), which pass with these settings in place."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from kgservice.config import load_settings
from kgservice.errors import ConfigError
from kgservice.vectors.qdrant_store import QdrantLayout, QdrantVectorStore


class Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, str, dict | None]] = []
    collection: dict | None = None  # what GET /collections/{name} answers (an existing collection)

    def _send(self, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self) -> None:
        n = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(n)) if n else None
        self.seen.append((self.command, self.path, body))
        if self.path == "/":  # the client's version check
            self._send({"title": "qdrant", "version": "1.19.0"})
            return
        if self.path.endswith("/exists"):
            result: object = {"exists": self.collection is not None}
        elif "/points" in self.path:
            result = {"operation_id": len(self.seen), "status": "completed"}
        elif self.command == "GET" and self.collection is not None:
            result = self.collection
        else:
            result = True
        self._send({"result": result, "status": "ok", "time": 0.0})

    do_GET = do_PUT = do_POST = _handle

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def qdrant_wire():
    Recorder.seen, Recorder.collection = [], None
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_new_collection_gets_the_cluster_layout_and_writes_are_strongly_ordered(qdrant_wire):
    layout = QdrantLayout(shards=6, replicas=2, write_consistency=2, quantization="scalar", on_disk=True)
    vs = QdrantVectorStore(dim=4, model_name="m", url=qdrant_wire, collection="kg_nodes", layout=layout,
                           connect_attempts=1)
    vs.upsert(["a"], np.array([[1, 0, 0, 0]], dtype=np.float32))
    vs.delete(["a", "b"])
    vs.close()
    create = next(b for m, p, b in Recorder.seen if m == "PUT" and p == "/collections/kg_nodes")
    assert create["vectors"] == {"size": 4, "distance": "Cosine", "on_disk": True}
    assert (create["shard_number"], create["replication_factor"], create["write_consistency_factor"]) == (6, 2, 2)
    assert create["quantization_config"] == {"scalar": {"type": "int8", "always_ram": True}}
    writes = [(m, p) for m, p, _ in Recorder.seen if "/points" in p]
    assert writes == [("PUT", "/collections/kg_nodes/points?wait=true&ordering=strong"),
                      ("POST", "/collections/kg_nodes/points/delete?wait=true&ordering=strong")]
    deleted = next(b for m, p, b in Recorder.seen if p.startswith("/collections/kg_nodes/points/delete"))
    assert len(deleted["points"]) == 2


def test_binary_quantization_and_the_server_defaults(qdrant_wire):
    QdrantVectorStore(dim=4, model_name="m", url=qdrant_wire, collection="b", connect_attempts=1,
                      layout=QdrantLayout(quantization="binary")).close()
    QdrantVectorStore(dim=4, model_name="m", url=qdrant_wire, collection="d", connect_attempts=1).close()
    bodies = {p: b for m, p, b in Recorder.seen if m == "PUT"}
    assert bodies["/collections/b"]["quantization_config"] == {"binary": {"always_ram": True}}
    plain = bodies["/collections/d"]
    assert plain["vectors"] == {"size": 4, "distance": "Cosine"}  # nothing the server would not default itself
    assert not {"shard_number", "replication_factor", "write_consistency_factor", "quantization_config"} & set(plain)


def test_an_existing_collection_with_another_layout_is_used_with_a_warning(qdrant_wire, caplog):
    Recorder.collection = {"status": "green", "config": {
        "params": {"vectors": {"size": 4, "distance": "Cosine"}, "shard_number": 1, "replication_factor": 1,
                   "write_consistency_factor": 1},
        "hnsw_config": {"m": 16, "ef_construct": 100, "full_scan_threshold": 10000},
        "optimizer_config": {"deleted_threshold": 0.2, "vacuum_min_vector_number": 1000,
                             "default_segment_number": 0, "flush_interval_sec": 5},
        "wal_config": {"wal_capacity_mb": 32, "wal_segments_ahead": 0},
        "metadata": {"kg_model_name": "m", "kg_dim": 4, "kg_vectors_schema": 1}},
        "optimizer_status": "ok", "segments_count": 1, "points_count": 0, "indexed_vectors_count": 0,
        "payload_schema": {}}
    with caplog.at_level("WARNING"):
        QdrantVectorStore(dim=4, model_name="m", url=qdrant_wire, collection="kg_nodes", connect_attempts=1,
                          layout=QdrantLayout(shards=6, replicas=2)).close()
    assert not any(m == "PUT" for m, _, _ in Recorder.seen)  # never re-created
    assert "shard_number 1 (configured 6)" in caplog.text and "replication_factor 1 (configured 2)" in caplog.text


def test_the_settings_come_from_the_environment_and_bad_ones_are_named(tmp_path):
    s = load_settings(env={"KG_QDRANT_SHARDS": "6", "KG_QDRANT_REPLICAS": "2", "KG_QDRANT_WRITE_CONSISTENCY": "2",
                           "KG_QDRANT_QUANTIZATION": "scalar", "KG_QDRANT_ON_DISK": "yes"})
    assert QdrantLayout.of(s) == QdrantLayout(6, 2, 2, "scalar", True)
    for env, named in (({"KG_QDRANT_QUANTIZATION": "pq"}, "KG_QDRANT_QUANTIZATION"),
                       ({"KG_QDRANT_REPLICAS": "0"}, "KG_QDRANT_REPLICAS"),
                       ({"KG_QDRANT_SHARDS": "two"}, "KG_QDRANT_SHARDS"),
                       ({"KG_TRUSTED_PROXIES": "10.0.0.0/33"}, "KG_TRUSTED_PROXIES"),
                       ({"KG_TRUSTED_PROXIES": "*"}, "KG_TRUSTED_PROXIES")):
        with pytest.raises(ConfigError, match=named):
            load_settings(env=env)
