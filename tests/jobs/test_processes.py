"""Real processes: a worker killed (SIGKILL) after its ingest landed but before it reported
→ the lease expires → `kg worker` runs the job again → done once, no unit stored twice; and
two knowledge bases in separate processes on one Neo4j keep their caches coherent."""

from __future__ import annotations

from tests.neo4j_helpers import wipe_all
import signal
import subprocess
import sys
import threading
from datetime import datetime, timezone

import pytest

from kgservice.notation import parse_units
from kgservice.service import KnowledgeBase
from tests.jobs.conftest import ROOT, kg_env, wait_for
from tests.pipeline.conftest import CORPUS, ask_params

DOOMED = """
import sys, time
from kgservice.config import load_settings
from kgservice.jobs.worker import Worker
from kgservice.service import KnowledgeBase

kb = KnowledgeBase(load_settings())
w = Worker(kb, worker_id="doomed", lease_s=float(sys.argv[1]))

def hang(*args, **kw):  # the graph write is done; die before the job is reported
    print("ingested", flush=True)
    time.sleep(3600)

w.queue.complete = hang
w.run_once()
"""

JOB_UNITS = "#k1 {kiwi} [is a] {fruit}\n#k2 {kiwi} [grows in] {New Zealand}\n#k3 {fruit} [has] {seeds}\n"


def _line(proc: subprocess.Popen, timeout: float) -> str:
    got: list[str] = []
    t = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
    t.start()
    t.join(timeout)
    if not got:
        proc.kill()
        raise AssertionError(f"no output from the worker in {timeout}s; stderr: {proc.stderr.read()[-2000:]}")
    return got[0].strip()


def test_killed_worker_job_runs_again_once_without_duplicate_units(jkb, backend, tmp_path):
    q = jkb.jobs
    job = q.submit("ingest", {"units": JOB_UNITS}, "alice")
    env = kg_env(jkb.settings.data_dir, backend)
    doomed = subprocess.Popen([sys.executable, "-c", DOOMED, "2"], env=env, cwd=str(ROOT), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    assert _line(doomed, 240) == "ingested"
    doomed.send_signal(signal.SIGKILL)
    doomed.wait(30)
    mid = q.get(job.id)
    assert (mid.status, mid.owner, mid.attempts) == ("running", "doomed", 1)

    wait_for(lambda: q.get(job.id).lease_until < datetime.now(timezone.utc), 30, "the killed worker's lease to expire")
    rerun = subprocess.run([sys.executable, "-c", "from kgservice.cli.app import main; main()", "worker", "--once",
                            "--lease", "30", "--worker-id", "second"],
                           env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "1 job(s) handled" in rerun.stdout
    done = q.get(job.id)
    assert (done.status, done.attempts, done.owner) == ("done", 2, "second")
    # the first run stored all three units; the second found them: nothing stored twice
    assert done.result == {"units": 3, "units_added": 0, "units_unchanged": 3, "nodes_added": 0, "nodes_touched": 0}
    assert [e.message for e in q.events(job.id)] == [
        "submitted by alice", "claimed by doomed", "claimed by second (lease of doomed expired)", "done"]
    fresh = KnowledgeBase(jkb.settings)  # a new view of the store (the embedded one caches its state)
    try:
        assert fresh.store.counts()["units"] == 3
        assert sorted(u.id for u in fresh.store.iter_units()) == ["k1", "k2", "k3"]
    finally:
        fresh.close()


INGEST_THROUGH_B = """
from kgservice.config import load_settings
from kgservice.jobs.worker import Worker
from kgservice.service import KnowledgeBase

kb = KnowledgeBase(load_settings())
job = kb.jobs.submit("ingest", {"units": "{smoking} [causes] {death}", "doc": "b.units"}, "bob", "b-1")
print(Worker(kb, worker_id="b-worker").run_once().status, flush=True)
kb.close()
"""


@pytest.mark.neo4j
def test_two_processes_on_one_neo4j_keep_caches_coherent(boundary, tmp_path, neo4j_connection):
    from kgservice.pipeline import ask
    from tests.jobs.conftest import neo4j_over
    from tests.pipeline.conftest import make_settings

    wipe_all(neo4j_connection)
    a = KnowledgeBase(make_settings(tmp_path / "a", **neo4j_over()))
    try:
        a.ingest_units(parse_units(CORPUS, a.lexicon, doc="corpus.units"))
        first = ask(a, "What does smoking cause?", params=ask_params())
        assert first.cited == ["s1"]
        n = boundary.count
        second = ask(a, "What does smoking cause?", params=ask_params())
        assert boundary.count == n and second.llm["calls"] == 0 and second.answer == first.answer
        python_q = ask(a, "Who created Python?", params=ask_params())
        assert python_q.cited == ["p1"]
        expanded = a.expand("smoking")
        assert a.expand("smoking") is expanded  # the in-memory expand cache

        b = subprocess.run([sys.executable, "-c", INGEST_THROUGH_B], env=kg_env(tmp_path / "b" / "kg", "neo4j"),
                           cwd=str(ROOT), capture_output=True, text=True, timeout=300)
        assert b.returncode == 0 and b.stdout.strip() == "done", b.stderr[-2000:]
        (new_unit,) = parse_units("{smoking} [causes] {death}", a.lexicon)  # content-hash id, as B stored it

        n = boundary.count
        unrelated = ask(a, "Who created Python?", params=ask_params())
        assert boundary.count == n and unrelated.llm["calls"] == 0  # B's ingest touched smoking and death only
        assert a.caches.last_sync["replayed"] == 1
        assert {c: v for c, v in unrelated.caches.items() if v != {"hits": 0, "misses": 0}} == {
            "key_nodes": {"hits": 1, "misses": 0}, "topk": {"hits": 1, "misses": 0},
            "decision": {"hits": 2, "misses": 0}}
        changed = ask(a, "What does smoking cause?", params=ask_params())
        assert boundary.count > n and changed.llm["calls"] == 3  # key nodes, judge, answer recomputed
        assert changed.answer != first.answer and new_unit.id in changed.cited
        after = a.expand("smoking")  # B touched smoking: the cached expansion is not served
        assert new_unit.id in after.units and new_unit.id not in expanded.units
    finally:
        a.close()


@pytest.mark.neo4j
def test_concurrent_ingests_bump_the_version_once_each(neo4j_connection):
    """16 concurrent ingests of distinct units → version +16, changes 1..16 each listing its nodes."""
    from kgservice.stores.neo4j.changes import Neo4jChangeFeed
    from kgservice.families import Lexicon

    store = neo4j_connection
    wipe_all(store)
    lex = Lexicon.load()
    batches = [parse_units(f"#c{i} {{node {i}}} [is a] {{common}}", lex) for i in range(16)]
    errors: list[BaseException] = []

    def go(units):
        try:
            store.ingest(units)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(b,)) for b in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    feed = Neo4jChangeFeed(store)
    assert feed.version() == 16
    changes = feed.since(0, 16)
    assert [c.seq for c in changes] == list(range(1, 17))
    assert sorted(tuple(sorted(c.touched)) for c in changes) == sorted(("common", f"node {i}") for i in range(16))
