"""Read-your-writes on a Neo4j cluster, with the cluster's lag reproduced by the lagging-read
store (tests/lagging_reads.py: secondaries that apply the leader's log only when a presented
bookmark makes them, never with time). Each "server" is a knowledge base with its own store
connection, as separate `kg serve` processes have; they share one Neo4j and one replication log.

With the bookmarks (X-KG-Bookmark, the process bookmark manager, ingest's duplicate check on the
leader): a job submitted on one server is found on another, what it stored is found with the
job's bookmark, no fact is stored twice, and an index is never stamped with a version newer
than the data it was built from. The same scenarios with the secondaries ignoring bookmarks
(and the duplicate check on a secondary, as before) show the 404s, the duplicate and the stale
index: the stand-in really lags. What a real cluster adds (bookmark waits on real members,
leader changes) cannot run here: docs/deploy.md.
"""

from __future__ import annotations

import os
from typing import Any
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from kgservice.config import Settings
from kgservice.jobs.worker import Worker
from kgservice.notation import parse_units
from kgservice.server import ServeOptions, create_app
from kgservice.service import KnowledgeBase
from kgservice.stores.versioned import VersionedIndex
from tests.lagging_reads import LaggingNeo4j, Replication
from tests.neo4j_helpers import wipe_all
from tests.server.conftest import CORPUS

HEADER = "X-KG-Bookmark"


class Deployment:
    def __init__(self, root: Path, rep: Replication):
        self.root, self.rep = root, rep
        self.kbs: list[KnowledgeBase] = []

    def kb(self, name: str, **flags: bool) -> KnowledgeBase:
        settings = Settings(data_dir=self.root / name, embedder="hash:64", llm_model="kgoffline/rules",
                            llm_retry_wait=0.0, llm_max_retries=1, rate_limit=0.0, backend="neo4j",
                            vector_backend="neo4j", neo4j_uri=os.environ["KG_TEST_NEO4J_URI"],
                            neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"),
                            neo4j_password=os.environ.get("NEO4J_PASSWORD"))
        k = KnowledgeBase(settings)
        store = LaggingNeo4j.connect(uri=settings.neo4j_uri, user=settings.neo4j_user,
                                     password=settings.neo4j_password)
        for flag, value in flags.items():
            setattr(store, flag, value)
        # no heartbeats: a beat is a write, which moves the server's own bookmark chain past what
        # another server wrote at a moment the test does not choose (the limits are not tested here)
        store.server_registry = lambda: None  # type: ignore[method-assign]
        k.parts.__dict__["store"] = store
        self.kbs.append(k)
        return k


@pytest.fixture
def deployment(tmp_path: Path, neo4j_connection, monkeypatch) -> Iterator[Deployment]:
    # a key's last-used touch is a write too, made by whichever server the key reaches; it would
    # move that server's bookmark chain past another server's write at a moment the test does not
    # choose, so the servers here do not touch
    from kgservice.apikeys.store import KeyStore

    monkeypatch.setattr(KeyStore, "_touch_due", lambda self, key_id: False)
    wipe_all(neo4j_connection)
    d = Deployment(tmp_path, Replication())
    yield d
    for k in d.kbs:
        k.close()


def servers(d: Deployment, **flags: bool) -> tuple[TestClient, TestClient, KnowledgeBase, str]:
    """Two servers and a worker's knowledge base; the key and the corpus are stored before the
    replication log starts (every secondary has them)."""
    a, b, w = d.kb("a", **flags), d.kb("b", **flags), d.kb("w", **flags)
    a.ingest_units(parse_units(CORPUS, a.lexicon, doc="corpus.units"))
    key = a.key_store().create("wanda", "writer")[0]
    for k in (a, b, w):
        k.store.replication = d.rep
    d.rep.start_version = int(neo4j_version(a))
    a.app, b.app = create_app(a.settings, ServeOptions(kb=a)), create_app(b.settings, ServeOptions(kb=b))
    return (TestClient(a.app, base_url="http://127.0.0.1"), TestClient(b.app, base_url="http://127.0.0.1"), w, key)


def neo4j_version(kb: KnowledgeBase) -> int:
    from kgservice.stores.neo4j.connection import Neo4jConnection

    return int(Neo4jConnection.read(kb.store, "changes_version")[0]["version"])


def submit_then_read(d: Deployment, **flags: bool) -> dict[str, object]:
    """Submit an ingest on A, read the job on B (without and with the 202's bookmark), run it on
    a worker, read the job and its unit on B (without and with the job's bookmark)."""
    a, b, w, key = servers(d, **flags)
    h = {"Authorization": f"Bearer {key}"}
    seen: dict[str, object] = {}
    with a, b:
        r = a.post("/v1/ingest", json={"units": "#s9 {smoking} [causes] {death}\n"}, headers=h)
        assert r.status_code == 202, r.text
        job_id, token = r.json()["job_id"], r.headers.get(HEADER)
        seen["token"], seen["field"] = token, r.json()["bookmark"]
        seen["job on B, no bookmark"] = b.get(f"/v1/jobs/{job_id}", headers=h).status_code
        seen["job on B, bookmark"] = b.get(f"/v1/jobs/{job_id}", headers={**h, HEADER: token}).status_code
        d.rep.catch_up()  # the worker's secondary has the job (the claim itself is on the leader)
        ran = Worker(w).run_once()
        assert ran is not None and ran.status == "done", ran
        head = d.rep.head
        done = b.get(f"/v1/jobs/{job_id}", headers=h)
        seen["job result bookmark"], seen["job header"] = done.json()["result"].get("bookmark"), done.headers.get(HEADER)
        seen["head"] = head
        seen["unit on B, no bookmark"] = b.get("/v1/units/s9", headers=h).status_code
        seen["unit on B, job bookmark"] = b.get("/v1/units/s9", headers={**h, HEADER: str(seen["job header"])}).status_code
    return seen


@pytest.mark.neo4j
def test_a_job_submitted_on_one_server_is_found_on_another_and_so_is_what_it_stored(deployment):
    seen = submit_then_read(deployment)
    assert seen["token"] == seen["field"] and str(seen["token"]).startswith("lag.")
    # B's secondary is where it was before the job: found once the 202's bookmark is presented
    assert seen["job on B, no bookmark"] == 404 and seen["job on B, bookmark"] == 200
    # the job's bookmark is the position of the ingest it ran, after the submission's
    assert seen["job header"] == seen["job result bookmark"]
    assert int(str(seen["job header"]).split(".")[1]) > int(str(seen["token"]).split(".")[1])
    assert seen["unit on B, job bookmark"] == 200


@pytest.mark.neo4j
def test_without_bookmarks_the_same_reads_miss_the_writes(deployment):
    """The stand-in lags: secondaries that ignore bookmarks (the code before) answer 404."""
    seen = submit_then_read(deployment, honour_bookmarks=False)
    assert seen["job on B, no bookmark"] == 404 and seen["job on B, bookmark"] == 404
    assert seen["unit on B, job bookmark"] == 404


FACT = "#f1 {water} [boils at] {100 degrees}\n"
SAME = "#f2 {water} [boils at] {100 degrees}\n"  # the same fact under another id


def stored_twice(d: Deployment, **flags: bool) -> tuple[object, list[str]]:
    a, b = d.kb("a", **flags), d.kb("b", **flags)
    a.ingest_units(parse_units(CORPUS, a.lexicon, doc="corpus.units"))
    for k in (a, b):
        k.store.replication = d.rep
    a.ingest_units(parse_units(FACT, a.lexicon, doc="one.units"))
    report = b.ingest_units(parse_units(SAME, b.lexicon, doc="two.units"))
    from kgservice.stores.neo4j.connection import Neo4jConnection

    found = [r["id"] for r in Neo4jConnection.read(a.store, "get_units", ids=["f1", "f2"])]
    return report, sorted(found)


@pytest.mark.neo4j
def test_the_duplicate_check_reads_the_leader_so_no_fact_is_stored_twice(deployment):
    report, found = stored_twice(deployment)
    assert found == ["f1"]
    assert report.duplicates == {"f2": "f1"}


@pytest.mark.neo4j
def test_a_duplicate_check_on_a_lagging_secondary_stores_the_fact_twice(deployment):
    report, found = stored_twice(deployment, leader_reads=False)
    assert found == ["f1", "f2"]


def stale_index(d: Deployment, **flags: bool) -> tuple[set[str], set[str]]:
    """Secondary 0 is caught up, secondary 1 is not; reads alternate 0, 1, 0, ... An index of the
    stored units among t1/t2 is built (version read, then the data read) and read again."""
    d.rep = Replication(secondaries=2)
    a = d.kb("a", **flags)
    a.store.replication = d.rep
    d.rep.start_version = neo4j_version(a)
    a.ingest_units(parse_units("#t1 {tea} [contains] {caffeine}\n", a.lexicon, doc="t.units"))
    b = d.kb("b", **flags)
    b.store.replication = d.rep
    d.rep.catch_up(0)
    d.rep._next = iter([0, 1] * 100)  # version read on 0 (ahead), data read on 1
    index = VersionedIndex(b.store, lambda: {r["id"] for r in b.store.read("get_units", ids=["t1", "t2"])})
    first = index.get()
    d.rep.catch_up()
    return first, index.get()


@pytest.mark.neo4j
def test_an_index_is_never_stamped_newer_than_the_data_it_read(deployment):
    first, again = stale_index(deployment)
    assert first == {"t1"} and again == {"t1"}


@pytest.mark.neo4j
def test_without_the_chain_an_index_is_stamped_newer_than_its_data_and_kept(deployment):
    first, again = stale_index(deployment, honour_bookmarks=False)
    assert first == set() and again == set()  # stale until the next change moves the version


def test_the_embedded_store_needs_no_bookmark_and_refuses_a_malformed_one(app, keys):
    """One process owns the embedded store: a write returns no bookmark (null, no header), a
    well-formed token is accepted and ignored, a malformed one is a 422 naming the header."""
    h = {"Authorization": f"Bearer {keys['writer']}"}
    with TestClient(app, base_url="http://127.0.0.1") as c:
        r = c.post("/v1/ingest", json={"units": "#s9 {smoking} [causes] {death}\n"}, headers=h)
        assert r.status_code == 202 and r.json()["bookmark"] is None and HEADER.lower() not in r.headers
        job = r.json()["job_id"]
        assert c.get(f"/v1/jobs/{job}", headers={**h, HEADER: "FB:kcwQ/KXUufrcSxO8nCtv+Bm4DgWQ"}).status_code == 200
        bad = c.get(f"/v1/jobs/{job}", headers={**h, HEADER: "two words"})
        assert bad.status_code == 422 and HEADER in bad.json()["detail"], bad.text


class Serving:
    """An app under uvicorn on a free loopback port, in a thread of this process (its store is a
    lagging one, which a `kg serve` subprocess could not be given)."""

    def __init__(self, app):
        import socket
        import threading

        import uvicorn

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "Serving":
        import time

        self.thread.start()
        end = time.monotonic() + 120  # only bounds a hang
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < end, "uvicorn did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(60)


def remote_ingest_behind_a_balancer(d: Deployment, tmp_path: Path, **flags: bool):
    """`kg ingest --server` through a round-robin balancer over two servers: the submission goes to
    A, the polls alternate B, A, ...; a worker thread runs the job."""
    import threading

    from kgservice.cli.remote import ingest_remote
    from tests.cluster_proxy import RoundRobin

    a, b, w, key = servers(d, **flags)
    worker = Worker(w)
    runs = threading.Thread(target=worker.run_forever, kwargs={"poll_s": 0.1, "max_jobs": 1}, daemon=True)
    f = tmp_path / "death.units"
    f.write_text("#s9 {smoking} [causes] {death}\n", "utf-8")
    try:
        with Serving(a.app) as sa, Serving(b.app) as sb, \
                RoundRobin([("127.0.0.1", sa.port), ("127.0.0.1", sb.port)], source="127.0.0.1") as lb:
            runs.start()
            return ingest_remote(lb.url, key, [f], timeout=120)
    finally:
        worker.stop.set()
        runs.join(60)


@pytest.mark.neo4j
def test_kg_ingest_server_behind_a_balancer_follows_its_job_on_every_server(deployment, tmp_path):
    (done,) = remote_ingest_behind_a_balancer(deployment, tmp_path)
    assert done.job["status"] == "done" and done.job["result"]["units_added"] == 1, done.job


@pytest.mark.neo4j
def test_kg_ingest_server_without_bookmarks_loses_its_job_on_the_next_server(deployment, tmp_path):
    from kgservice.cli.remote import RemoteRefused

    with pytest.raises(RemoteRefused, match="404"):
        remote_ingest_behind_a_balancer(deployment, tmp_path, honour_bookmarks=False)


def mcp_call(base: str, key: str, tool: str, args: dict) -> Any:
    """One MCP tool call over Streamable HTTP (a fresh session: any server may answer the next)."""
    import asyncio

    from tests.server.test_processes import mcp_http

    async def call():
        http, client = mcp_http(base, key)
        async with http, client as c:
            return await c.call_tool(tool, args)
    return asyncio.run(call())


def mcp_submit_then_read(d: Deployment, leader: Any, **flags: bool) -> dict[str, object]:
    """submit_then_read through MCP tools: ingest_text on A, job_status on B (without and with the
    reply's bookmark), a worker runs it, get_unit of what it stored on B (without and with the
    job's bookmark), and save_result's bookmark. Each server reads from a secondary of its own: an
    MCP session's own follow-up requests on A (closing it) present A's chain, which must not
    bring B's secondary forward."""
    d.rep = Replication(secondaries=3)
    a, b, w, key = servers(d, **flags)
    for i, k in enumerate(d.kbs[-3:]):
        k.store.secondary = i
    corpus = {u.id for u in parse_units(CORPUS, w.lexicon)}
    seen: dict[str, object] = {}
    with Serving(a.app) as sa, Serving(b.app) as sb:
        at_a, at_b = f"http://127.0.0.1:{sa.port}", f"http://127.0.0.1:{sb.port}"
        sub = mcp_call(at_a, key, "ingest_text", {"text": "Tea contains caffeine."})
        assert not sub.is_error, sub.content
        job_id, token = sub.structured_content["job_id"], sub.structured_content["bookmark"]
        seen["token"] = token
        seen["job on B, no bookmark"] = mcp_call(at_b, key, "job_status", {"job_id": job_id}).is_error
        seen["job on B, bookmark"] = mcp_call(at_b, key, "job_status", {"job_id": job_id, "bookmark": token}).is_error
        d.rep.catch_up()
        ran = Worker(w).run_once()
        assert ran is not None and ran.status == "done", ran
        done = mcp_call(at_b, key, "job_status", {"job_id": job_id, "bookmark": token})
        job_token = (done.structured_content or {}).get("result", {}).get("bookmark")
        seen["job token"] = job_token
        with leader.driver.session() as s:  # what the job stored, read on the real database
            added = sorted({r["id"] for r in s.run("MATCH (u:Unit) RETURN u.id AS id")} - corpus)
        assert added, "the job stored no unit"
        seen["unit on B, no bookmark"] = mcp_call(at_b, key, "get_unit", {"unit_id": added[0]}).is_error
        got = mcp_call(at_b, key, "get_unit", {"unit_id": added[0], "bookmark": job_token})
        seen["unit on B, job bookmark"] = got.is_error
        saved = mcp_call(at_b, key, "save_result", {"question": "q?", "answer": "a", "bookmark": job_token})
        seen["save_result bookmark"] = saved.structured_content["bookmark"]
        bad = mcp_call(at_b, key, "get_unit", {"unit_id": added[0], "bookmark": "two words"})
        seen["malformed"] = bad.is_error and "bookmark" in bad.content[0].text
    return seen


@pytest.mark.neo4j
def test_mcp_write_tools_return_a_bookmark_that_read_tools_on_another_server_accept(deployment, neo4j_connection):
    seen = mcp_submit_then_read(deployment, neo4j_connection)
    assert str(seen["token"]).startswith("lag.") and str(seen["job token"]).startswith("lag.")
    assert seen["job on B, no bookmark"] is True and seen["job on B, bookmark"] is False  # found with it
    assert int(str(seen["job token"]).split(".")[1]) > int(str(seen["token"]).split(".")[1])
    assert seen["unit on B, no bookmark"] is True and seen["unit on B, job bookmark"] is False
    assert str(seen["save_result bookmark"]).startswith("lag.") and seen["malformed"] is True


@pytest.mark.neo4j
def test_mcp_reads_on_secondaries_ignoring_bookmarks_miss_the_writes(deployment, neo4j_connection):
    """The same calls with the secondaries ignoring bookmarks (the stand-in really lags)."""
    seen = mcp_submit_then_read(deployment, neo4j_connection, honour_bookmarks=False)
    assert seen["job on B, bookmark"] is True and seen["unit on B, job bookmark"] is True
