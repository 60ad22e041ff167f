"""A deployment of several servers on one machine: three `kg serve` and two `kg worker` on the
test Neo4j (vectors in its vector index, so every process searches the same ones), behind a
round-robin balancer on loopback (tests/cluster_proxy.py) that the servers trust
(KG_TRUSTED_PROXIES=127.0.0.2, the balancer's source address).

What it shows, each with real processes and real HTTP:

* a web sign-in made on one server is good on the others; a form's outcome (a new key, shown
  once) made on one server shows on the next; a sign-out, or revoking the key, ends the
  session on every server at once;
* a job submitted through one server is read through another at once (no 404), run by one of
  the workers, and every server's cached answer follows it (caches coherent);
* the rate limit is the deployment's: a burst of 90 per key across three servers admits 90
  through the balancer, 30 on one server directly;
* X-Forwarded-For / X-Forwarded-Proto / X-Request-ID are believed from the balancer only: the
  failed-authentication limit counts each client behind it apart, a client's own header does
  not move it, and the log lines show the client and the request id.

Counts, never timings: a refill of 0.001/s (per deployment) adds under one token in the life
of the test, so each count is fixed by the bucket sizes; the deadlines only bound a hang.
Not run here: a Neo4j cluster (Enterprise / Aura: secondaries, leader changes, bookmarks), a
Qdrant cluster, a real balancer; docs/deploy.md says how those are set up."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cluster_proxy import RoundRobin
from tests.neo4j_helpers import wipe_all
from tests.processes import KG, ask, free_port, kg, neo4j_env, new_key, stop
from tests.server.conftest import CORPUS

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

BALANCER = "127.0.0.2"  # the balancer's source address: the only trusted proxy
BURST, FAIL_BURST = 90, 6  # per deployment: 30 and 2 per server
DEADLINE = 300.0  # seconds: only bounds a hang
CSRF = re.compile(r'<meta name="csrf-token" content="([^"]*)">')
NEW_KEY = re.compile(r"kg_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}")


def cluster_env(data_dir: Path) -> dict[str, str]:
    env = neo4j_env(data_dir, KG_VECTOR_BACKEND="neo4j", KG_TRUSTED_PROXIES=BALANCER, KG_RATE_LIMIT="0.001",
                    KG_RATE_BURST=str(BURST), KG_AUTH_FAIL_RATE="0.001", KG_AUTH_FAIL_BURST=str(FAIL_BURST),
                    KG_METRICS_PUBLIC="1")
    env.pop("KG_SINGLE_PROCESS")  # the vectors are shared (in Neo4j): a real deployment's setting
    return env


def http(source: str = "127.0.0.1") -> httpx.Client:
    """A client whose requests come from ``source`` (any 127.x address is this machine)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=120)


def live_servers(base: str) -> int:
    text = httpx.get(base + "/metrics", timeout=30).text
    found = re.search(r"^kg_servers_live (\S+)$", text, re.M)
    return int(float(found.group(1))) if found else 0


def wait_until(what: str, check, deadline: float = DEADLINE):
    end = time.monotonic() + deadline
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.5)


class Browser:
    """A browser's cookie jar for one site, kept by hand: the session cookie is Secure (the
    balancer says the client used https), which httpx would not send back over http."""

    def __init__(self, base: str, source: str = "127.0.0.1"):
        self.base, self.http, self.cookie = base, http(source), None
        self.last: httpx.Response | None = None

    def _send(self, method: str, path: str, **kw) -> httpx.Response:
        headers = {"Cookie": f"kg_session={self.cookie}"} if self.cookie else {}
        r = self.http.request(method, self.base + path, headers=headers, follow_redirects=False, **kw)
        set_cookie = r.headers.get("set-cookie", "")
        if set_cookie.startswith("kg_session="):
            self.cookie = None if "Max-Age=0" in set_cookie else set_cookie.split(";")[0].split("=", 1)[1]
        self.last = r
        return r

    def get(self, path: str) -> httpx.Response:
        return self._send("GET", path)

    def post(self, path: str, data: dict) -> httpx.Response:
        return self._send("POST", path, data=data)


class Cluster:
    def __init__(self, root: Path, env: dict[str, str]):
        self.root, self.env = root, env
        self.servers: list[tuple[str, subprocess.Popen, Path]] = []
        self.workers: list[subprocess.Popen] = []
        self.proxy: RoundRobin | None = None
        self.keys: dict[str, str] = {}

    @property
    def bases(self) -> list[str]:
        return [b for b, _, _ in self.servers]

    def log(self, i: int) -> str:
        return self.servers[i][2].read_text()

    def admin(self) -> dict[str, str]:
        return {"X-API-Key": self.keys["admin"]}

    def new_key(self, user: str, role: str) -> dict:
        """A key made through the balancer by the admin (on whichever server is next)."""
        r = httpx.post(self.proxy.url + "/v1/admin/keys", json={"user": user, "role": role}, headers=self.admin(),
                       timeout=60)
        assert r.status_code == 201, r.text
        return r.json()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, neo4j_connection) -> Iterator[Cluster]:
    wipe_all(neo4j_connection)
    root = tmp_path_factory.mktemp("cluster")
    env = cluster_env(root / "cli")
    (root / "corpus.units").write_text(CORPUS, "utf-8")
    done = kg(env, "ingest", str(root / "corpus.units"))
    assert done.returncode == 0, done.stderr
    c = Cluster(root, env)
    c.keys = {"admin": new_key(env, "root", "admin"), "writer": new_key(env, "wanda", "writer")}
    logs = []
    try:
        for name in "abc":  # started together, waited for together
            port, log = free_port(), root / f"serve-{name}.log"
            out = open(log, "w")
            logs.append(out)
            proc = subprocess.Popen([*KG, "serve", "--port", str(port), "--log-level", "info"],
                                    env=cluster_env(root / name), stdout=out, stderr=subprocess.STDOUT)
            c.servers.append((f"http://127.0.0.1:{port}", proc, log))
        for name in ("w1", "w2"):
            out = open(root / f"{name}.log", "w")
            logs.append(out)
            c.workers.append(subprocess.Popen([*KG, "worker", "--poll", "0.2"], env=cluster_env(root / name),
                                              stdout=out, stderr=subprocess.STDOUT))
        for base, proc, log in c.servers:
            def ready(base=base, proc=proc, log=log) -> bool:
                assert proc.poll() is None, f"kg serve exited early:\n{log.read_text()}"
                try:
                    return httpx.get(base + "/readyz", timeout=5).status_code == 200
                except httpx.HTTPError:
                    return False
            wait_until(f"{base} ready", ready)
        # every server counts the three (heartbeats every 10 s): the limits' share is 1/3 from here on
        wait_until("three live servers seen by each", lambda: all(live_servers(b) == 3 for b in c.bases))
        with RoundRobin([("127.0.0.1", int(b.rsplit(":", 1)[1])) for b in c.bases], source=BALANCER) as proxy:
            c.proxy = proxy
            yield c
    finally:
        for _, proc, _ in c.servers:
            stop(proc, 30)
        for proc in c.workers:
            stop(proc, 30)
        for out in logs:
            out.close()


def test_a_sign_in_on_one_server_holds_on_the_others(cluster):
    web = Browser(cluster.proxy.url)
    r = web.post("/ui/login", {"key": cluster.keys["admin"]})
    assert r.status_code == 303 and web.cookie, r.text
    set_cookie = r.headers["set-cookie"]
    assert "Secure" in set_cookie and "HttpOnly" in set_cookie  # https, as the trusted balancer said
    signed_on = cluster.proxy.served[-1]
    pages = [web.get("/ui/ask"), web.get("/ui/admin")]
    assert [p.status_code for p in pages] == [200, 200], [p.headers.get("location") for p in pages]
    assert set(cluster.proxy.served[-2:]) == {0, 1, 2} - {signed_on}  # the two other servers
    csrf = CSRF.search(pages[1].text).group(1)
    # a form's outcome made on one server is shown once by the next one
    r = web.post("/ui/admin/keys", {"user": "made-on-the-web", "role": "reader", "csrf": csrf})
    assert r.status_code == 303 and r.headers["location"] == "/ui/admin"
    made_on = cluster.proxy.served[-1]
    shown = web.get("/ui/admin")
    assert cluster.proxy.served[-1] != made_on
    secrets = NEW_KEY.findall(shown.text)
    assert len(secrets) == 1 and "made-on-the-web" in shown.text
    assert not NEW_KEY.findall(web.get("/ui/admin").text)  # once
    with http() as h:
        assert h.get(cluster.proxy.url + "/v1/stats", headers={"X-API-Key": secrets[0]}).status_code == 200
    # signing out on one server ends the session on all three
    assert web.post("/ui/logout", {"csrf": csrf}).status_code == 303 and web.cookie is None
    kept = r.request.headers["cookie"].split("=", 1)[1]  # the cookie a copy of the browser kept
    ended = []
    for _ in range(3):
        web.cookie = kept  # each reply also drops it from the browser (said once)
        ended.append(web.get("/ui/ask"))
    assert [(e.status_code, e.headers["location"]) for e in ended] == [(303, "/ui/login?ended=1")] * 3
    assert len(set(cluster.proxy.served[-3:])) == 3


def test_revoking_a_key_ends_its_sessions_on_every_server_at_once(cluster):
    made = cluster.new_key("rev", "writer")
    web = Browser(cluster.proxy.url, source="127.0.0.10")
    assert web.post("/ui/login", {"key": made["key"]}).status_code == 303
    assert [web.get("/ui/ask").status_code for _ in range(3)] == [200, 200, 200]
    r = httpx.delete(cluster.proxy.url + f"/v1/admin/keys/{made['key_id']}", headers=cluster.admin(), timeout=60)
    assert r.status_code == 200, r.text
    after = [web.get("/ui/v1/stats") for _ in range(3)]  # the page's API: each server once
    assert [a.status_code for a in after] == [401, 401, 401] and len(set(cluster.proxy.served[-3:])) == 3


def test_a_job_submitted_on_one_server_is_read_on_another_and_every_cache_follows(cluster):
    h = {"X-API-Key": cluster.keys["writer"]}
    question = "What does smoking cause?"
    for base in cluster.bases:  # each server answers and caches
        first = ask(base, question, h)
        assert "s9" not in first["cited"]
        assert ask(base, question, h)["llm"]["calls"] == 0  # its cache
    with http() as c:
        r = c.post(cluster.proxy.url + "/v1/ingest", json={"units": "#s9 {smoking} [causes] {death}\n"},
                   headers={**h, "Idempotency-Key": "cluster-1"})
        assert r.status_code == 202, r.text
        job_id, rid = r.json()["job_id"], r.headers["x-request-id"]
        token = r.headers["x-kg-bookmark"]  # the database's own bookmark of the submission
        assert token == r.json()["bookmark"] and token.startswith("FB:"), r.text
        submitted_on = cluster.proxy.served[-1]
        read = c.get(cluster.proxy.url + f"/v1/jobs/{job_id}", headers={**h, "X-KG-Bookmark": token})  # the next server
        assert read.status_code == 200 and cluster.proxy.served[-1] != submitted_on, read.text
        refused = c.get(cluster.proxy.url + f"/v1/jobs/{job_id}", headers={**h, "X-KG-Bookmark": "FB:garbage"})
        assert refused.status_code == 422 and "X-KG-Bookmark" in refused.json()["detail"], refused.text
        assert rid.startswith("lb-")  # the balancer's request id, kept by the server
        events = c.get(cluster.proxy.url + f"/v1/jobs/{job_id}/events", headers=h).text
        assert f"(request {rid})" in events

        # polled through the balancer once a second, with keys of their own (each admits 30 per server)
        pollers = iter([{"X-API-Key": cluster.new_key(f"poll{i}", "admin")["key"]} for i in range(4)] * 30)

        def finished() -> dict | None:
            time.sleep(0.5)
            job = c.get(cluster.proxy.url + f"/v1/jobs/{job_id}", headers=next(pollers)).json()
            return job if job["status"] in ("done", "failed", "cancelled") else None

        job = wait_until("the job to end", finished)
    assert job["status"] == "done", job
    assert job["result"]["bookmark"].startswith("FB:")  # the worker's writes, for the next read anywhere
    assert int(job["owner"].split(":")[1]) in {w.pid for w in cluster.workers}
    for base in cluster.bases:  # every server's cached answer followed the change
        # without a bookmark a server catching up may answer from the previous version, marked
        loose = ask(base, question, h)
        assert ("s9" in loose["cited"]) is not loose["stale"], (base, loose)
        after = ask(base, question, {**h, "X-KG-Bookmark": job["result"]["bookmark"]})  # never stale
        assert "s9" in after["cited"] and after["stale"] is False, (base, after)
        assert after["as_of_version"] > loose["as_of_version"] or not loose["stale"], (base, loose, after)
        assert httpx.get(base + "/v1/units/s9", headers=h, timeout=60).status_code == 200
        with_token = httpx.get(base + "/v1/units/s9", headers={**h, "X-KG-Bookmark": job["result"]["bookmark"]},
                               timeout=60)
        assert with_token.status_code == 200, with_token.text


def test_the_rate_limit_is_the_deployments(cluster):
    through = cluster.new_key("burst", "reader")["key"]
    direct = cluster.new_key("one-server", "reader")["key"]
    with http() as c:
        codes = [c.get(cluster.proxy.url + "/v1/stats", headers={"X-API-Key": through}).status_code
                 for _ in range(BURST + 12)]
        assert codes.count(200) == BURST and codes[BURST:] == [429] * 12  # 30 on each of 3 servers
        refused = c.get(cluster.proxy.url + "/v1/stats", headers={"X-API-Key": through})
        assert refused.status_code == 429 and "across 3 servers" in refused.json()["detail"]
        one = [c.get(cluster.bases[0] + "/v1/stats", headers={"X-API-Key": direct}).status_code
               for _ in range(BURST // 3 + 5)]
        assert one.count(200) == BURST // 3 and one[-5:] == [429] * 5  # a server alone admits its share


def test_forwarded_headers_are_believed_from_the_balancer_only(cluster):
    bad = {"X-API-Key": "kg_nobody00_" + "x" * 32}
    a = cluster.bases[0]
    with http("127.0.0.3") as x, http("127.0.0.4") as y, http("127.0.0.5") as z:
        # client x behind the balancer: 2 failures per server, 6 in all, then refused everywhere
        codes = [x.get(cluster.proxy.url + "/v1/stats", headers=bad).status_code for _ in range(FAIL_BURST + 3)]
        assert codes == [401] * FAIL_BURST + [429] * 3
        # x cannot move itself by writing the header: the balancer appends its real address
        spoof = x.get(cluster.proxy.url + "/v1/stats", headers={**bad, "X-Forwarded-For": "127.0.0.77"})
        assert spoof.status_code == 429
        assert x.get(a + "/v1/stats", headers={**bad, "X-Forwarded-For": "127.0.0.78"}).status_code == 429
        # client y behind the same balancer has its own count: the forwarded address, not the balancer's
        seen = y.get(cluster.proxy.url + "/v1/stats", headers={**bad, "X-Request-ID": "from-y-1"})
        assert seen.status_code == 401 and seen.headers["x-request-id"] == "from-y-1"
        assert seen.json()["request_id"] == "from-y-1"
        y_server = cluster.proxy.served[-1]
        # z straight to a server, claiming to be x and to have come over https: neither is believed
        direct = z.get(a + "/v1/stats", headers={**bad, "X-Forwarded-For": "127.0.0.3",
                                                 "X-Request-ID": "chosen-by-z"})
        assert direct.status_code == 401  # z's own count, not x's (exhausted on every server)
        assert re.fullmatch(r"[0-9a-f]{32}", direct.headers["x-request-id"])  # a new id, not z's
        assert direct.json()["request_id"] == direct.headers["x-request-id"]
        login = z.post(a + "/ui/login", data={"key": cluster.keys["writer"]},
                       headers={"X-Forwarded-Proto": "https"}, follow_redirects=False)
        assert login.status_code == 303 and "Secure" not in login.headers["set-cookie"]
    # the log lines: the client behind the balancer and its request id; z as itself
    assert re.search(r"\[from-y-1\] 127\.0\.0\.4:\d+ - \"GET /v1/stats HTTP/1\.1\" 401", cluster.log(y_server))
    rid = direct.headers["x-request-id"]
    assert re.search(rf"\[{rid}\] 127\.0\.0\.5:\d+ - \"GET /v1/stats HTTP/1\.1\" 401", cluster.log(0))
    assert "chosen-by-z" not in cluster.log(0)
