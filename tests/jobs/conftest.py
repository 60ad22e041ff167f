"""Fixtures for the job and cross-process cache tests: a knowledge base on each backend
(the Neo4j one wiped first), and environments for `kg` subprocesses on the same stores."""

from __future__ import annotations

from tests.neo4j_helpers import wipe_all
import os
import time
from pathlib import Path

import pytest

from kgservice.service import KnowledgeBase
from tests.pipeline.conftest import boundary, litellm_module, make_settings, script  # noqa: F401 (fixtures)

ROOT = Path(__file__).resolve().parents[2]


def neo4j_over() -> dict:
    return dict(backend="neo4j", neo4j_uri=os.environ["KG_TEST_NEO4J_URI"],
                neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"), neo4j_password=os.environ.get("NEO4J_PASSWORD"))


@pytest.fixture(params=["embedded", "neo4j"])
def backend(request) -> str:
    if request.param == "neo4j":
        wipe_all(request.getfixturevalue("neo4j_connection"))  # skips (or fails under CI) without a server
    return request.param


@pytest.fixture
def jkb(backend, tmp_path):
    k = KnowledgeBase(make_settings(tmp_path, **(neo4j_over() if backend == "neo4j" else {})))
    yield k
    k.close()


def expire_lease(queue, job_id: str) -> None:
    """End a running job's lease now, as if its worker died long ago: the lease's end is moved
    into the past on the backend's own clock (SQLite's ``time.time()``, Neo4j's ``timestamp()``).

    The tests claim with a 60 s lease and then call this, instead of claiming with a sub-second
    lease and sleeping past it: on a loaded machine two Bolt round trips can outlast a 0.3 s
    lease, so the "still leased" check failed (the flaky CI run)."""
    if queue.backend == "neo4j":
        with queue.store.driver.session(database=queue.store.database) as s:
            got = s.run("MATCH (j:KgJob {id: $id}) WHERE j.status = 'running' "
                        "SET j.lease_until = timestamp() - 1000 RETURN count(j) AS n", id=job_id).single()["n"]
    else:
        got = queue._conn().execute("UPDATE jobs SET lease_until = ? WHERE id = ? AND status = 'running'",
                                    (time.time() - 1, job_id)).rowcount
    assert got == 1, f"job {job_id} is not running: no lease to expire"


def kg_env(data_dir: Path, backend: str) -> dict[str, str]:
    """Environment for a `kg` / python subprocess on the same store as make_settings(...)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    env.update(PYTHONPATH=str(ROOT), KG_DATA_DIR=str(data_dir), KG_EMBEDDER="hash:256", KG_LLM_MODEL="kgoffline/rules",
               KG_LLM_RETRY_WAIT="0", LITELLM_LOCAL_MODEL_COST_MAP="True")
    if backend == "neo4j":
        # one worker process at a time here: its vectors may stay in the data dir
        env.update(KG_NEO4J_URI=os.environ["KG_TEST_NEO4J_URI"], KG_BACKEND="neo4j", KG_SINGLE_PROCESS="1")
    return env


def wait_for(predicate, timeout: float, what: str, step: float = 0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = predicate()
        if got:
            return got
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
