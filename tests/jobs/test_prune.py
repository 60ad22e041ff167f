"""``kg jobs prune`` / ``POST /v1/jobs/prune`` / ``JobQueue.prune``: finished jobs (done, failed,
cancelled) last changed more than N days ago go, with their events; queued and running jobs
stay whatever their age; a pruned job's idempotency key is free again. Ages are set on the
backend's own clock (as ``expire_lease`` does), so nothing waits for days to pass."""

from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from kgservice.jobs.model import InvalidJob
from kgservice.server import ServeOptions, create_app
from tests.jobs.conftest import kg_env
from tests.processes import kg

DAY_MS = 86_400_000


def age(queue, job_id: str, days: float) -> None:
    """Move the job's last change ``days`` days into the past."""
    if queue.backend == "neo4j":
        with queue.store.driver.session(database=queue.store.database) as s:
            s.run("MATCH (j:KgJob {id: $id}) SET j.updated_ms = timestamp() - $ms", id=job_id,
                  ms=int(days * DAY_MS)).consume()
    else:
        queue._conn().execute("UPDATE jobs SET updated = ? WHERE id = ?", (time.time() - days * 86_400, job_id))


def units(n: int) -> dict:
    return {"units": f"#pr{n} {{a{n}}} [is a] {{b}}", "doc": f"p{n}"}


def finished(queue, n: int, how: str, user: str = "ann", key: str | None = None):
    job = queue.submit("ingest", units(n), user, key)
    if how == "cancelled":
        return queue.cancel(job.id, user)
    claimed = queue.claim("w1", 60)
    assert claimed.id == job.id
    assert (queue.complete(job.id, "w1", {}) if how == "done" else queue.fail(job.id, "w1", "boom"))
    return queue.get(job.id)


def test_prune_deletes_old_finished_jobs_only(jkb):
    q = jkb.jobs
    old = [finished(q, 1, "done", key="k-old"), finished(q, 2, "failed"), finished(q, 3, "cancelled")]
    running = q.submit("ingest", units(4), "ann")
    assert q.claim("w2", 60).id == running.id
    fresh = finished(q, 6, "done")
    queued = q.submit("ingest", units(5), "ann")
    for j in (*old, running, queued):
        age(q, j.id, 10)
    assert q.prune(30) == 0  # nothing is 30 days old
    assert q.prune(5) == 3
    assert [q.get(j.id) for j in old] == [None, None, None]
    assert q.events(old[0].id) == []
    assert {j.id for j in q.list(limit=100)} == {running.id, queued.id, fresh.id}
    again = q.submit("ingest", units(7), "ann", "k-old")  # the key of a pruned job is free again
    assert again.id != old[0].id and again.status == "queued"
    assert q.prune(0) == 1 and q.get(fresh.id) is None  # 0 days: every finished job
    assert q.get(running.id).status == "running" and q.get(queued.id).status == "queued"
    with pytest.raises(InvalidJob, match="older_than_days"):
        q.prune(-1)


def test_prune_over_rest_is_an_admin_call(jkb):
    old = finished(jkb.jobs, 1, "done")
    age(jkb.jobs, old.id, 40)
    app = create_app(jkb.settings, ServeOptions(kb=jkb))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        keys = {r: app.state.ctx.keys().create(f"u-{r}", r)[0] for r in ("writer", "admin")}
        r = c.post("/v1/jobs/prune", json={"older_than_days": 30}, headers={"X-API-Key": keys["writer"]})
        assert r.status_code == 403
        r = c.post("/v1/jobs/prune", json={"older_than_days": -1}, headers={"X-API-Key": keys["admin"]})
        assert r.status_code == 422 and "older_than_days" in r.text
        r = c.post("/v1/jobs/prune", json={"older_than_days": 30}, headers={"X-API-Key": keys["admin"]})
        assert (r.status_code, r.json()) == (200, {"pruned": 1, "older_than_days": 30})
    assert jkb.jobs.get(old.id) is None


def test_kg_jobs_prune_on_the_command_line(jkb, backend, tmp_path):
    old, kept = finished(jkb.jobs, 1, "failed"), finished(jkb.jobs, 2, "done")
    age(jkb.jobs, old.id, 8)
    env = kg_env(tmp_path / "kg", backend)
    done = kg(env, "jobs", "prune", "--older-than", "7", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"pruned": 1, "older_than_days": 7.0}
    assert jkb.jobs.get(old.id) is None and jkb.jobs.get(kept.id) is not None
    bad = kg(env, "jobs", "prune", "--older-than", "-3")
    assert bad.returncode == 2 and "--older-than" in bad.stderr
