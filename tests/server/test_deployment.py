"""Real processes: how a deployment keeps one owner per store and one set of vectors.

* the embedded `kg serve` runs REST-submitted jobs itself (no worker) and says so in /readyz;
  a `kg worker`, `kg ingest` or second `kg serve` on its data dir is refused, naming the server,
  and writes nothing;
* `kg serve` / `kg worker` on the shared Neo4j graph without a shared vector store are refused
  (exit 2, naming KG_QDRANT_URL and KG_SINGLE_PROCESS) before anything connects;
* two `kg worker` on one embedded data dir (no server) finish every job: a vector directory
  held for a moment by the other worker is a transient failure, retried.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx

from tests.processes import KG, env_for, kg, new_key, serving, stop, wait_job


def test_embedded_serve_runs_its_jobs_and_refuses_other_writers(embedded_env, tmp_path: Path):
    h = {"Authorization": f"Bearer {new_key(embedded_env, 'wanda', 'writer')}"}
    (tmp_path / "more.units").write_text("#m1 {zebrafish} [has] {fins}\n", "utf-8")
    with serving(embedded_env) as (base, _, _):
        ready = httpx.get(base + "/readyz").json()
        assert ready["jobs"].startswith("in-process")
        assert ready["vectors"]["shared"] is False and ready["vectors"]["location"].endswith("qdrant")
        sub = httpx.post(base + "/v1/ingest", json={"units": "#srv1 {zebrafish} [has] {fins}\n"}, headers=h)
        assert sub.status_code == 202, sub.text
        job = wait_job(base, sub.json()["job_id"], h)
        assert job["status"] == "done", job
        assert httpx.get(base + "/v1/units/srv1", headers=h).json()["subject"] == "zebrafish"
        for args, what in ((("worker", "--drain"), "`kg worker`"), (("ingest", str(tmp_path / "more.units")), "`kg ingest`"),
                           (("serve", "--port", "0"), "a second `kg serve`")):
            refused = kg(embedded_env, *args)
            assert refused.returncode == 1, (args, refused.stdout, refused.stderr)
            line = " ".join(refused.stderr.split())
            assert f"{what} refused" in line and base in line and "Nothing was written" in line, line
            assert "Traceback" not in refused.stderr
        assert httpx.get(base + "/v1/stats", headers=h).json()["units"] == 9  # the corpus's 8 + srv1; m1 never landed
    # the server gone, the same CLI ingest goes through
    assert kg(embedded_env, "ingest", str(tmp_path / "more.units")).returncode == 0


def test_neo4j_serve_and_worker_refuse_vectors_kept_per_process(tmp_path: Path):
    env = env_for(tmp_path / "kg", KG_BACKEND="neo4j", KG_NEO4J_URI="bolt://127.0.0.1:9", NEO4J_PASSWORD="unused-pass")
    env.pop("KG_QDRANT_URL", None)
    env.pop("KG_SINGLE_PROCESS", None)
    for args in (("serve", "--port", "0"), ("worker", "--once")):
        done = kg(env, *args)
        assert done.returncode == 2, (args, done.stderr)
        line = " ".join(done.stderr.split())
        assert "KG_QDRANT_URL" in line and "KG_SINGLE_PROCESS=1" in line and "Traceback" not in done.stderr, line
        assert not (tmp_path / "kg" / "qdrant").exists()  # refused before anything was opened


def test_two_workers_on_one_data_dir_fail_no_job(embedded_env, tmp_path: Path):
    """Jobs queued while no server runs (through the job store, as the CLI's operator); two
    workers drain them at once: every job ends done."""
    from kgservice.config import load_settings
    from kgservice.service import KnowledgeBase

    with KnowledgeBase(load_settings(env=embedded_env)) as kb:
        ids = [kb.jobs.submit("ingest", {"units": f"#tw{i} {{worker{i}}} [has] {{job{i}}}\n"}, "wanda").id
               for i in range(12)]
    logs = [open(tmp_path / f"w{i}.log", "w+") for i in range(2)]
    workers = [subprocess.Popen([*KG, "worker", "--drain", "--poll", "0.1"], env=embedded_env, stdout=log,
                                stderr=subprocess.STDOUT) for log in logs]
    try:
        for w in workers:
            assert w.wait(240) == 0, [Path(log.name).read_text() for log in logs]
    finally:
        for w in workers:
            if w.poll() is None:
                stop(w, 10)
        for log in logs:
            log.close()
    listed = json.loads(kg(embedded_env, "jobs", "list", "--json").stdout)
    statuses = {j["id"]: j["status"] for j in listed}
    assert {statuses[i] for i in ids} == {"done"}, [Path(log.name).read_text() for log in logs]
    assert json.loads(kg(embedded_env, "stats", "--json").stdout)["units"] == 8 + 12


def test_beside_an_embedded_serve_ask_and_search_are_refused_at_once_and_graph_reads_work(embedded_env):
    """F2: `kg ask` / `kg search` beside a running embedded server waited for the vector store the
    server holds (KG_VECTOR_LOCK_WAIT, 30 s by default) and then failed with a Qdrant-server
    message. They are refused at once, naming the server and where to ask; commands that read
    only the graph answer beside it. The lock wait is set far beyond the subprocess's time bound
    here, so a command that still waited for the vectors fails the test by timing out."""
    env = {**embedded_env, "KG_VECTOR_LOCK_WAIT": "100000"}
    with serving(env) as (base, _, _):
        for args, what in ((("ask", "What does smoking cause?"), "`kg ask`"), (("search", "smoking"), "`kg search`")):
            refused = kg(env, *args)
            assert refused.returncode == 1, (args, refused.stdout, refused.stderr)
            line = " ".join(refused.stderr.split())
            assert f"{what} refused" in line and base in line and f"{base}/ui/ask" in line, line
            assert "Qdrant" not in line and "Traceback" not in refused.stderr
        expand = kg(env, "expand", "smoking")
        assert expand.returncode == 0 and "{smoking} [causes] {lung cancer}" in expand.stdout, expand.stderr
        stats = kg(env, "stats", "--json")
        assert stats.returncode == 0 and json.loads(stats.stdout)["units"] == 8, stats.stderr
