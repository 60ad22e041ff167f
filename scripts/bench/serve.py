"""Serving benchmark (issue 15): 32 concurrent clients, cached `ask` and `expand` through REST
(`kg serve`, one process) vs the same library calls made in-process by 32 threads.

    python scripts/bench/serve.py [--backend neo4j|embedded] [--clients 32] [--requests 640]

Neo4j: the benchmark server of README.md (KG_BENCH_NEO4J_URI, default bolt://127.0.0.1:7688,
NEO4J_PASSWORD); its graph is wiped and the demo corpus ingested. The caches are warmed first,
so every measured ask makes 0 LLM calls (checked). Also measured, sequentially: one API-key
verification (what every request pays) and the Neo4j version-counter read of docs/SERVICE.md §5.6
(what a per-request cache-coherence check costs) and, under load, how many version reads
the server actually sent per request (its /metrics: concurrent requests share reads).
`expand (miss)` is expand with a request never made before in that process (each seed with a
new `limit`), so it measures the uncached path on a server that caches expansions. CPU per
request is read from /proc for the server, Neo4j (KG_BENCH_NEO4J_DATA/neo4j.pid) and this
process, after the warm-up round. Loopback only; the clients share the machine's cores with the
server (and Neo4j), which the ratio includes. To compare two checkouts, run this same script
from each in turn (the server runs from the checkout the script is in).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import ROOT, WORK, fmt, neo4j_env, save, summary_ms, table  # noqa: E402

QUESTIONS = 8
SEEDS = 8
_fresh = itertools.count()


def fresh_expand(seeds: list[str]) -> dict:
    """An expand request not made before in this run (8 seeds x 500 limits): a cache miss."""
    k = next(_fresh)
    return {"seeds": [seeds[k % len(seeds)]], "limit": 1 + (k // len(seeds)) % 500}


def settings_for(backend: str, data_dir: Path):
    from kgservice.config import Settings

    over = {}
    if backend == "neo4j":
        n = neo4j_env()
        over = dict(backend="neo4j", neo4j_uri=n["uri"], neo4j_user=n["user"], neo4j_password=n["password"])
    return Settings(data_dir=data_dir, embedder="hash:256", llm_model="kgoffline/rules", rate_limit=0.0, **over)


def env_for(settings) -> dict[str, str]:
    env = {**os.environ, "KG_DATA_DIR": str(settings.data_dir), "KG_EMBEDDER": settings.embedder,
           "KG_LLM_MODEL": settings.llm_model, "KG_RATE_LIMIT": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if settings.backend == "neo4j":
        env.update({"KG_BACKEND": "neo4j", "KG_NEO4J_URI": settings.neo4j_uri, "NEO4J_PASSWORD": settings.neo4j_password})
    return env


def prepare(settings) -> tuple[list[str], list[str]]:
    """Fresh store with the demo corpus; warm caches. Returns (questions, expand seeds)."""
    from kgservice.notation import parse_file
    from kgservice.pipeline.asking import ask
    from kgservice.service import KnowledgeBase

    shutil.rmtree(settings.data_dir, ignore_errors=True)
    kb = KnowledgeBase(settings)
    try:
        if settings.backend == "neo4j":
            kb.store.wipe()
        units = [u for f in sorted((ROOT / "demo" / "units").glob("*.units")) for u in parse_file(f, kb.lexicon, doc=f.name)]
        kb.ingest_units(units)
        questions = [q.strip() for q in (ROOT / "demo" / "questions.txt").read_text("utf-8").splitlines() if q.strip()][:QUESTIONS]
        for q in questions:
            ask(kb, q)
        for q in questions:
            again = ask(kb, q)
            assert again.llm["calls"] == 0, f"cache not warm for {q!r}: {again.llm}"
        seeds = list(dict.fromkeys(u.subject for u in units))[:SEEDS]
        return questions, seeds
    finally:
        kb.close()


def in_process(settings, questions, seeds, clients: int, n: int) -> dict[str, dict]:
    from kgservice.server import ops
    from kgservice.server.models import AskIn, ExpandIn
    from kgservice.service import KnowledgeBase

    kb = KnowledgeBase(settings)
    out: dict[str, dict] = {}
    try:
        calls = {"ask": lambda i: ops.ask(kb, AskIn(question=questions[i % len(questions)])),
                 "expand": lambda i: ops.expand(kb, ExpandIn(seeds=[seeds[i % len(seeds)]])),
                 "expand (miss)": lambda i: ops.expand(kb, ExpandIn(**fresh_expand(seeds)))}
        for name, fn in calls.items():
            for i in range(clients):  # warm
                fn(i)

            def timed(i: int, fn=fn) -> float:
                t = time.perf_counter()
                fn(i)
                return time.perf_counter() - t

            cpu0 = cpu_of({"neo4j": neo4j_pid()})
            with ThreadPoolExecutor(clients) as pool:
                t0 = time.perf_counter()
                lat = list(pool.map(timed, range(n)))
                wall = time.perf_counter() - t0
            out[name] = {"rps": n / wall, **summary_ms(lat), "cpu_ms": cpu_delta(cpu0, cpu_of({"neo4j": neo4j_pid()}), n)}
        keys = kb.key_store()
        key, _ = keys.create("bench", "reader")
        lat = []
        for _ in range(200):
            t = time.perf_counter()
            assert keys.verify(key) is not None
            lat.append(time.perf_counter() - t)
        out["key_verify"] = summary_ms(lat)
        if settings.backend == "neo4j":
            from neo4j import RoutingControl

            driver = kb.store.driver
            lat = []
            for _ in range(200):
                t = time.perf_counter()
                driver.execute_query("MATCH (m:KgMeta {id: 'state'}) RETURN m.version AS v", database_=kb.store.database,
                                     routing_=RoutingControl.READ, bookmark_manager_=None)
                lat.append(time.perf_counter() - t)
            out["version_read"] = summary_ms(lat)
        return out
    finally:
        kb.close()


def cpu_seconds(pid: int | None) -> float | None:
    """utime + stime of a process from /proc (None if it is gone or unknown)."""
    if not pid:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def cpu_of(pids: dict[str, int | None]) -> dict[str, float | None]:
    out = {name: cpu_seconds(pid) for name, pid in pids.items()}
    out["bench"] = sum(os.times()[:2])  # this process: the clients (REST rows) or the library (in-process rows)
    return out


def cpu_delta(before: dict, after: dict, n: int) -> dict[str, float | None]:
    """CPU milliseconds per request, by process."""
    return {k: (None if before.get(k) is None or after.get(k) is None else round((after[k] - before[k]) * 1000 / n, 2))
            for k in after}


def neo4j_pid() -> int | None:
    from common import neo4j_server_pid

    return neo4j_server_pid()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def hammer(base: str, headers: dict, make, clients: int, n: int, probe=None) -> dict:
    """``clients`` concurrent keep-alive connections (aiohttp: the lightest client here, since
    it shares the cores with the server) working through ``n`` requests. ``probe()`` (sync) is
    called after the warm-up round and after the run: ``{"probe": (before, after)}``."""
    import aiohttp

    lat: list[float] = []
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(base, headers=headers, connector=connector,
                                     timeout=aiohttp.ClientTimeout(total=120)) as c:
        async def one(i: int) -> float:
            path, body = make(i)
            t = time.perf_counter()
            async with c.post(path, json=body) as r:
                await r.read()
                r.raise_for_status()
            return time.perf_counter() - t

        await asyncio.gather(*(one(i) for i in range(clients)))  # warm the connections and the server
        before = await asyncio.to_thread(probe) if probe else None
        queue = list(range(n))
        t0 = time.perf_counter()

        async def worker() -> None:
            while queue:
                lat.append(await one(queue.pop()))

        await asyncio.gather(*(worker() for _ in range(clients)))
        wall = time.perf_counter() - t0
        after = await asyncio.to_thread(probe) if probe else None
    return {"rps": n / wall, **summary_ms(lat), "probe": (before, after)}


def version_counters(base: str, headers: dict) -> dict[str, float] | None:
    """The server's version-read counters from /metrics (None on a server without them)."""
    import httpx

    text = httpx.get(base + "/metrics", headers=headers, timeout=10).text
    found = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in ("kg_version_reads", "kg_version_read_calls"):
            found[name] = float(value)
    return found if len(found) == 2 else None


def over_rest(settings, questions, seeds, clients: int, n: int, no_auth: bool) -> dict[str, dict]:
    import httpx

    from kgservice.service import KnowledgeBase

    headers = {}
    if not no_auth:
        kb = KnowledgeBase(settings)
        try:
            headers = {"Authorization": "Bearer " + kb.key_store().create("bench", "reader")[0]}
        finally:
            kb.close()
    port = free_port()
    cmd = [sys.executable, "-c", "from kgservice.cli.app import main; main()", "serve", "--port", str(port),
           "--log-level", "warning", *(["--no-auth"] if no_auth else [])]
    proc = subprocess.Popen(cmd, env=env_for(settings), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            try:
                if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        makers = {"ask": lambda i: ("/v1/ask", {"question": questions[i % len(questions)]}),
                  "expand": lambda i: ("/v1/expand", {"seeds": [seeds[i % len(seeds)]]}),
                  "expand (miss)": lambda i: ("/v1/expand", fresh_expand(seeds))}
        out = {}
        pids = {"server": proc.pid, "neo4j": neo4j_pid()}
        for name, make in makers.items():
            # snapshots after the warm-up round (a fresh server computes its first answers then);
            # CPU is read first, so the /metrics request lands outside the CPU window
            def probe() -> tuple:
                return cpu_of(pids), version_counters(base, headers)

            out[name] = asyncio.run(hammer(base, headers, make, clients, n, probe))
            (cpu0, before), (cpu1, after) = out[name].pop("probe")
            out[name]["cpu_ms"] = cpu_delta(cpu0, cpu1, n)
            if before and after:
                out[name]["version_reads_per_request"] = round(
                    (after["kg_version_reads"] - before["kg_version_reads"]) / n, 3)
                out[name]["version_checks_per_request"] = round(
                    (after["kg_version_read_calls"] - before["kg_version_read_calls"]) / n, 3)
        return out
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("neo4j", "embedded"), default="neo4j")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--requests", type=int, default=640)
    ap.add_argument("--no-auth-run", action="store_true", help="also measure REST with --no-auth (the key check's share)")
    a = ap.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    load0 = os.getloadavg()
    print(f"{time.strftime('%H:%M:%S', time.gmtime())} UTC, load {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
          f"code: {ROOT}", flush=True)
    settings = settings_for(a.backend, WORK / f"serve-{a.backend}")
    questions, seeds = prepare(settings)
    lib = in_process(settings, questions, seeds, a.clients, a.requests)
    rest = over_rest(settings, questions, seeds, a.clients, a.requests, no_auth=False)
    rest_open = over_rest(settings, questions, seeds, a.clients, a.requests, no_auth=True) if a.no_auth_run else None
    rows = []
    for op in ("ask", "expand", "expand (miss)"):
        for how, res in (("in-process", lib), ("REST", rest), ("REST --no-auth", rest_open)):
            if res is None:
                continue
            r = res[op]
            rows.append({"op": op, "how": how, "rps": round(r["rps"], 1), "p50_ms": round(r["p50"], 1),
                         "p95_ms": round(r["p95"], 1), "of_in_process": round(r["rps"] / lib[op]["rps"], 2),
                         "cpu_ms_per_request": r.get("cpu_ms"),
                         "version_reads_per_request": r.get("version_reads_per_request"),
                         "version_checks_per_request": r.get("version_checks_per_request")})

    def cpu(r: dict) -> str:
        c = r["cpu_ms_per_request"] or {}
        return " / ".join(fmt(c.get(k), 2) for k in ("server", "neo4j", "bench"))

    print(table(["op", "how", "req/s", "p50 ms", "p95 ms", "REST / in-process", "CPU ms/req server / neo4j / bench",
                 "version reads / checks per req"],
                [[r["op"], r["how"], fmt(r["rps"]), fmt(r["p50_ms"]), fmt(r["p95_ms"]), fmt(r["of_in_process"], 2), cpu(r),
                  f"{fmt(r['version_reads_per_request'], 3)} / {fmt(r['version_checks_per_request'], 3)}"]
                 for r in rows],
                title=f"{a.backend}: {a.clients} clients, {a.requests} cached requests each (load {load0[0]:.1f} at start)"))
    for name in ("key_verify", "version_read"):
        if name in lib:
            print(f"{name}: p50 {lib[name]['p50']:.2f} ms, p95 {lib[name]['p95']:.2f} ms (sequential, 200 calls)")
    path = save("serve", rows, {"backend": a.backend, "clients": a.clients, "requests": a.requests,
                                 "load_avg_start": [round(x, 2) for x in load0],
                                 "key_verify_ms": lib["key_verify"], "version_read_ms": lib.get("version_read"),
                                 "load_avg_end": [round(x, 2) for x in os.getloadavg()]})
    print(f"saved {path}")


if __name__ == "__main__":
    main()
