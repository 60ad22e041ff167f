"""A store that stops answering: every route (the key check included) answers a 503 JSON
envelope, /readyz names what is down, the worker waits and resumes, a job's transient
failures are retried before the job fails.

In-process here (the failure injected where the store is read); the real outage, a Neo4j
server stopped under `kg serve` and `kg worker`, is tests/server/test_outage_neo4j.py."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient

from kgservice.jobs.worker import Worker
from kgservice.stores.neo4j import Neo4jUnavailable
from kgservice.vectors.base import VectorStoreLocked
from tests.server.conftest import BASE, auth

DOWN = "Neo4j at bolt://127.0.0.1:7687 is not answering (ServiceUnavailable); is it running?"


class DownKeys:
    """A key store whose backend went away."""

    async def averify(self, presented: str):
        raise Neo4jUnavailable(DOWN)

    def verify(self, presented: str):
        raise Neo4jUnavailable(DOWN)

    def list(self):
        raise Neo4jUnavailable(DOWN)

    def close(self) -> None:
        pass


def test_key_check_on_a_store_that_is_down_is_a_503_envelope(app, keys):
    sc = app.state.ctx
    sc._keys = DownKeys()  # the key store the server opened, now without its backend
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as c:
        for method, path in (("GET", "/v1/stats"), ("POST", "/v1/search"), ("GET", "/v1/units/s1")):
            r = c.request(method, path, headers=auth(keys["reader"]), json={"query": "smoking"} if method == "POST" else None)
            assert r.status_code == 503, (path, r.text)
            assert r.headers["content-type"] == "application/json" and r.headers["retry-after"]
            assert r.json() == {"detail": DOWN, "status": 503, "request_id": r.headers["x-request-id"]}
        ready = c.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["checks"]["graph"] == "ok" and ready.json()["checks"]["keys"].startswith("Neo4jUnavailable")


def test_a_route_whose_store_is_down_is_a_503_envelope(app, keys, monkeypatch):
    sc = app.state.ctx
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as c:
        h = auth(keys["reader"])
        assert c.get("/v1/stats", headers=h).status_code == 200

        def down(*a, **k):
            raise Neo4jUnavailable(DOWN)

        monkeypatch.setattr(sc.kb.store, "counts", down)
        r = c.get("/v1/stats", headers=h)
        assert (r.status_code, r.json()) == (503, {"detail": DOWN, "status": 503, "request_id": r.headers["x-request-id"]})


class FlakyQueue:
    """The real queue behind a claim that fails while the store is "down"."""

    def __init__(self, real, failures: int, stop: threading.Event):
        self.real, self.failures, self.stop = real, failures, stop
        self.claims = 0

    def claim(self, worker_id: str, lease_s: float):
        self.claims += 1
        if self.claims <= self.failures:
            raise Neo4jUnavailable(DOWN)
        job = self.real.claim(worker_id, lease_s)
        if job is None:
            self.stop.set()
        return job

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_worker_waits_out_an_outage_and_runs_the_job_after(kb):
    job = kb.jobs.submit("ingest", {"units": "#o1 {otter} [has] {whiskers}\n"}, "wanda")
    logs: list[str] = []
    w = Worker(kb, log=logs.append)
    w.queue = FlakyQueue(kb.jobs, failures=3, stop=w.stop)
    assert w.run_forever(poll_s=0.05) == 1
    assert kb.jobs.get(job.id).status == "done"
    assert logs[0].startswith("the store is not answering (Neo4jUnavailable)")
    assert sum("not answering" in m for m in logs) == 1  # one line per outage, not one per attempt
    assert "the store answers again; claiming jobs" in logs


def test_transient_failures_in_the_work_are_retried_before_the_job_fails(kb, monkeypatch):
    import kgservice.jobs.worker as worker_mod
    from kgservice.jobs.run import run_job

    monkeypatch.setattr(worker_mod, "WORK_RETRY_WAIT_S", 0.01)
    calls = []

    def locked_twice(kb_, job):
        calls.append(job.id)
        if len(calls) <= 2:
            raise VectorStoreLocked("Qdrant local storage …/qdrant/kg_nodes is locked by another process")
        return run_job(kb_, job)

    job = kb.jobs.submit("ingest", {"units": "#o2 {otter} [eats] {fish}\n"}, "wanda")
    done = Worker(kb, work=locked_twice).run_once()
    assert (done.status, len(calls)) == ("done", 3)
    assert sum("retrying after VectorStoreLocked" in e.message for e in kb.jobs.events(job.id)) == 2

    def bad_input(kb_, job):
        calls.append("bad")
        raise ValueError("not transient")

    before = len(calls)
    job = kb.jobs.submit("ingest", {"units": "#o3 {otter} [eats] {crabs}\n"}, "wanda")
    failed = Worker(kb, work=bad_input).run_once()
    assert (failed.status, len(calls) - before) == ("failed", 1)  # a real failure is not retried
