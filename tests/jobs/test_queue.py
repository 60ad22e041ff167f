"""The job queue on both backends: safe claims under contention, leases, attempts, visible
failures, idempotency keys, checks before queueing. Expected values are worked out by hand
(job counts, unit ids written in the payloads), never read back from the code under test."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from prometheus_client import REGISTRY

from kgservice.jobs import IdempotencyConflict, InvalidJob, JobNotCancellable, JobNotFound
from kgservice.jobs.worker import Worker
from tests.jobs.conftest import expire_lease


def _units(i: int) -> dict:
    return {"units": f"#j{i} {{item {i}}} [is a] {{thing}}"}


def test_eight_threads_claim_200_jobs_each_exactly_once(jkb):
    q = jkb.jobs
    submitted = [q.submit("ingest", _units(i), "alice").id for i in range(200)]
    claims: list[tuple[str, str]] = []
    lock = threading.Lock()
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        me = f"w{n}"
        try:
            start.wait()
            while True:
                job = q.claim(me, 600)
                if job is None:
                    return
                with lock:
                    claims.append((job.id, me))
                time.sleep(0.01)  # the work: other workers claim meanwhile (else one thread may win every race)
                assert q.complete(job.id, me, {"by": me})
        except BaseException as exc:  # surfaced below: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    per_job = Counter(j for j, _ in claims)
    assert len(claims) == 200 and set(per_job) == set(submitted)
    assert [j for j, n in per_job.items() if n > 1] == []  # no job claimed twice
    assert len({w for _, w in claims}) > 1  # the claims really were contended by several workers
    done = q.list(status="done", limit=500)
    assert len(done) == 200 and all(j.attempts == 1 for j in done)
    assert q.list(status="queued") == [] and q.list(status="running") == []


def test_idempotency_key_returns_the_same_job(jkb):
    q = jkb.jobs
    a = q.submit("ingest", _units(1), "alice", "key-1")
    again = q.submit("ingest", _units(1), "alice", "key-1")
    other_user = q.submit("ingest", _units(1), "bob", "key-1")
    no_key_1 = q.submit("ingest", _units(1), "alice")
    no_key_2 = q.submit("ingest", _units(1), "alice")
    assert again.id == a.id and other_user.id != a.id and len({a.id, other_user.id, no_key_1.id, no_key_2.id}) == 4
    with pytest.raises(IdempotencyConflict, match="key-1"):
        q.submit("ingest", _units(2), "alice", "key-1")
    assert len(q.list(limit=50)) == 4  # the repeat and the conflict queued nothing
    assert [e.status for e in q.events(a.id)] == ["queued"]


def test_invalid_jobs_are_refused_before_queueing(jkb):
    q = jkb.jobs
    cases = [
        ("ingest", {"units": "{a} [is a]"}, "payload.units"),  # notation error: no argument
        ("ingest", {"text": "x", "mode": "fast"}, "payload.mode"),
        ("ingest", {"text": "x", "doc": "../etc/passwd"}, "payload.doc"),
        ("ingest", {"text": "x", "extra": 1}, "unexpected field"),
        ("ingest", {}, "payload"),
        ("delete", {"units": "{a} [is a] {b}"}, "kind"),
    ]
    for kind, payload, field in cases:
        with pytest.raises(InvalidJob, match=field.replace(".", r"\.")):
            q.submit(kind, payload, "alice")
    with pytest.raises(InvalidJob, match="user"):
        q.submit("ingest", _units(1), "")
    assert q.list() == []


def _metric(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


def test_failing_job_is_failed_with_its_error_and_counted(jkb):
    q = jkb.jobs
    ok = q.submit("ingest", {"units": "#x1 {a} [is a] {b}"}, "alice")
    bad = q.submit("ingest", {"units": "#x1 {a} [is a] {c}"}, "bob")  # parses; conflicts once #x1 is stored
    failed0 = _metric("kg_jobs_failed_total")
    w = Worker(jkb, worker_id="w1")
    assert w.run_once().status == "done"
    got = w.run_once()
    assert got.id == bad.id and got.status == "failed" and got.result is None
    assert "#x1 already exists with different content" in got.error
    assert [e.status for e in q.events(bad.id)] == ["queued", "running", "failed"]
    assert q.events(bad.id)[-1].message == got.error
    assert _metric("kg_jobs_failed_total") == failed0 + 1
    assert [j.id for j in q.list(status="failed")] == [bad.id] and q.get(ok.id).result["units_added"] == 1
    assert w.run_once() is None  # nothing went back to queued


def test_expired_lease_is_reclaimed_and_the_stale_worker_refused(jkb):
    q = jkb.jobs
    job = q.submit("ingest", _units(1), "alice")
    first = q.claim("w1", 60)
    assert first.id == job.id and first.attempts == 1 and first.owner == "w1"
    assert q.claim("w2", 60) is None  # leased: not claimable
    expire_lease(q, job.id)  # w1 died
    second = q.claim("w2", 60)
    assert second.id == job.id and second.attempts == 2 and second.owner == "w2"
    assert not q.heartbeat(job.id, "w1", 60) and q.heartbeat(job.id, "w2", 60)
    assert not q.complete(job.id, "w1", {"stale": True})  # the first worker's late result is refused
    assert q.complete(job.id, "w2", {"fresh": True})
    got = q.get(job.id)
    assert got.status == "done" and got.result == {"fresh": True}
    assert [e.message for e in q.events(job.id)] == [
        "submitted by alice", "claimed by w1", "claimed by w2 (lease of w1 expired)", "done"]
    assert [e.seq for e in q.events(job.id, after=2)] == [3, 4]


def test_a_job_whose_worker_keeps_dying_fails_after_max_attempts(jkb):
    q = jkb.jobs  # 3 attempts by default
    job = q.submit("ingest", _units(1), "alice")
    for n in range(3):
        assert q.claim(f"w{n}", 60).attempts == n + 1
        expire_lease(q, job.id)  # the worker died
    failed0 = _metric("kg_jobs_failed_total")
    assert q.claim("w9", 60) is None
    got = q.get(job.id)
    assert got.status == "failed" and got.error.startswith("lease expired 3 time(s)")
    assert _metric("kg_jobs_failed_total") == failed0 + 1


def test_jobs_survive_a_new_knowledge_base(jkb):
    """Durable: a job queued through one KnowledgeBase is there for another on the same store."""
    from kgservice.service import KnowledgeBase

    job = jkb.jobs.submit("ingest", _units(7), "alice", "k")
    jkb.close()
    other = KnowledgeBase(jkb.settings)
    try:
        assert other.jobs.get(job.id).status == "queued"
        done = Worker(other, worker_id="w").run_once()
        assert done.id == job.id and done.status == "done" and done.result["units_added"] == 1
        assert [u.id for u in other.store.get_units(["j7"])] == ["j7"]
    finally:
        other.close()


def test_read_only_refuses_submit(tmp_path):
    from kgservice.service import KnowledgeBase, ReadOnlyError
    from tests.pipeline.conftest import make_settings

    kb = KnowledgeBase(make_settings(tmp_path, read_only=True))
    try:
        with pytest.raises(ReadOnlyError):
            kb.jobs.submit("ingest", _units(1), "alice")
    finally:
        kb.close()


def test_list_filters_by_user_and_status_newest_first(jkb):
    q = jkb.jobs
    a1 = q.submit("ingest", _units(1), "alice")
    b1 = q.submit("ingest", _units(2), "bob")
    a2 = q.submit("ingest", _units(3), "alice")
    Worker(jkb, worker_id="w1").run_once()  # the oldest (a1) is done
    assert [j.id for j in q.list()] == [a2.id, b1.id, a1.id]
    assert [j.id for j in q.list(user="alice")] == [a2.id, a1.id]
    assert [j.id for j in q.list(status="done")] == [a1.id]
    assert [j.id for j in q.list(user="alice", status="queued")] == [a2.id]
    assert all(j.payload is None for j in q.list())  # listings leave payloads out
    with pytest.raises(InvalidJob, match="status: must be one of"):
        q.list(status="finished")
    with pytest.raises(InvalidJob, match="limit"):
        q.list(limit=0)


def test_cancel_queued_running_and_finished_jobs(jkb):
    q = jkb.jobs
    queued = q.submit("ingest", _units(1), "alice")
    got = q.cancel(queued.id, "alice")
    assert got.status == "cancelled"
    assert [e.message for e in q.events(queued.id)] == ["submitted by alice", "cancelled by alice"]
    assert q.claim("w1", 60) is None  # a cancelled job is never claimed
    with pytest.raises(JobNotCancellable, match="already cancelled"):
        q.cancel(queued.id, "alice")
    with pytest.raises(JobNotFound):
        q.cancel("nope", "alice")

    running = q.submit("ingest", _units(2), "alice")
    assert q.claim("w1", 60).id == running.id
    got = q.cancel(running.id, "admin")
    assert got.status == "running" and got.cancel_requested
    assert q.events(running.id)[-1].message.startswith("cancel requested by admin")
    assert q.complete(running.id, "w1", {"units_added": 1})  # too late to stop: the worker completes it
    with pytest.raises(JobNotCancellable, match="already done"):
        q.cancel(running.id, "alice")


def test_worker_stops_a_job_cancelled_before_its_work_started(jkb):
    q = jkb.jobs
    job = q.submit("ingest", _units(1), "alice")
    calls = []
    claim = q.claim

    def claim_then_cancel(worker_id, lease_s):  # the cancel lands between the claim and the work
        got = claim(worker_id, lease_s)
        q.cancel(got.id, "alice")
        return got

    q.claim = claim_then_cancel
    got = Worker(jkb, q, worker_id="w1", work=lambda kb, j: calls.append(j.id) or {}).run_once()
    assert calls == [] and got.status == "cancelled" and got.result is None
    assert [e.status for e in q.events(job.id)][-1] == "cancelled"
    assert jkb.store.counts().get("units", 0) == 0  # nothing was ingested


def test_a_running_job_with_a_cancel_is_not_run_again_after_its_worker_died(jkb):
    q = jkb.jobs
    job = q.submit("ingest", _units(1), "alice")
    assert q.claim("w1", 60).id == job.id
    q.cancel(job.id, "alice")  # requested: the lease is still valid
    expire_lease(q, job.id)  # w1 died: the lease expires
    assert q.claim("w2", 60) is None
    got = q.get(job.id)
    assert got.status == "cancelled" and got.attempts == 1


def test_worker_reports_a_cancel_that_came_too_late(jkb):
    q = jkb.jobs
    job = q.submit("ingest", _units(1), "alice")

    def work(kb, j):
        q.cancel(j.id, "alice")  # arrives while the ingest runs
        return {"units_added": 1}

    got = Worker(jkb, q, worker_id="w1", work=work).run_once()
    assert got.status == "done" and got.cancel_requested
    assert "cancel was requested while the ingest ran" in q.events(job.id)[-2].message
