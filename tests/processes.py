"""Real `kg` processes for tests: the CLI run as a subprocess, `kg serve` on a free loopback port
(waited for until /readyz answers), `kg worker`, and the requests the multi-process tests make
of them. One module, so every test that starts processes starts them the same way."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

KG = [sys.executable, "-c", "from kgservice.cli.app import main; main()"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen, timeout: float) -> None:
    """SIGTERM (a graceful shutdown), then SIGKILL if it has not ended within ``timeout`` s."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def env_for(data_dir: Path, **extra: str) -> dict[str, str]:
    """A process environment on ``data_dir`` with the hash embedder and the offline model."""
    env = dict(os.environ)
    env.update({"KG_DATA_DIR": str(data_dir), "KG_EMBEDDER": "hash:256", "KG_LLM_MODEL": "kgoffline/rules",
                "KG_LLM_RETRY_WAIT": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "KG_RATE_LIMIT": "0"})
    env.update(extra)
    return env


def neo4j_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """:func:`env_for` on the test Neo4j (KG_TEST_NEO4J_URI). There is no Qdrant server on this
    machine: each process keeps its own vectors, which kg serve and kg worker refuse unless told
    the deployment is one process (KG_SINGLE_PROCESS); these tests check keys, jobs and caches,
    not vector search."""
    return env_for(data_dir, **{"KG_NEO4J_URI": os.environ["KG_TEST_NEO4J_URI"], "KG_BACKEND": "neo4j",
                                "NEO4J_PASSWORD": os.environ.get("NEO4J_PASSWORD", ""), "KG_SINGLE_PROCESS": "1",
                                **extra})


def kg(env: dict[str, str], *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*KG, *args], env=env, capture_output=True, text=True, timeout=300, input=input)


def new_key(env: dict[str, str], user: str, role: str) -> str:
    done = kg(env, "keys", "create", "--user", user, "--role", role)
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip()
    assert key.startswith("kg_") and key.split("_")[1] in done.stderr  # stdout: the key; stderr: its id
    return key


@contextmanager
def serving(env: dict[str, str], *args: str, until: str = "/readyz"):
    """`kg serve` on a free port, yielded once ``until`` (/readyz; /livez: the port is open)
    answers 200: (base URL, process, log file)."""
    port = free_port()
    log = open(Path(env["KG_DATA_DIR"]).parent / f"serve-{port}.log", "w+")
    proc = subprocess.Popen([*KG, "serve", "--port", str(port), "--log-level", "warning", *args], env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"kg serve exited early:\n{Path(log.name).read_text()}"
            try:
                if httpx.get(base + until, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "kg serve did not become ready"
            time.sleep(0.3)
        yield base, proc, log
    finally:
        if proc.poll() is None:
            stop(proc, 20)
        log.close()


@contextmanager
def working(env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """`kg worker` polling the queue every 0.2 s, its output in ``log``; stopped at the end."""
    with open(log, "w+") as out:
        proc = subprocess.Popen([*KG, "worker", "--poll", "0.2"], env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            stop(proc, 30)


def wait_job(base: str, job_id: str, headers: dict[str, str], bound: float = 120,
             log: Path | None = None) -> dict:
    """The job once it has ended (done, failed or cancelled); ``log`` (the worker's) is shown
    when it has not ended within ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while True:
        job = httpx.get(f"{base}/v1/jobs/{job_id}", headers=headers, timeout=30).json()
        if job["status"] in ("done", "failed", "cancelled"):
            return job
        assert time.monotonic() < deadline, f"job still {job['status']}: {job}\n{log.read_text() if log else ''}"
        time.sleep(0.2)


def ask(base: str, question: str, headers: dict[str, str]) -> dict:
    """POST /v1/ask, which must answer 200: the answer's JSON."""
    r = httpx.post(base + "/v1/ask", json={"question": question}, headers=headers, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()


@contextmanager
def serving_app(app) -> Iterator[str]:
    """``app`` under uvicorn on a free loopback port in this process (for tests that play the
    model in-process: an override or a held stream), yielded once it listens: its base URL."""
    import threading

    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def wait_ready(base: str, proc: subprocess.Popen, log: Path, bound: float = 180) -> httpx.Response:
    """/readyz's 200 reply from a server started by hand (a shell line, a compose command), once
    it answers; fails with the server's log if the process ends first or ``bound`` s pass."""
    deadline = time.monotonic() + bound
    while True:
        assert proc.poll() is None, f"the server exited early:\n{log.read_text()}"
        try:
            ready = httpx.get(base + "/readyz", timeout=2)
            if ready.status_code == 200:
                return ready
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"the server did not become ready:\n{log.read_text()}"
        time.sleep(0.3)


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")


def run_in_terminal(args: list[str], env: dict[str, str], until: str = "",
                    then: Callable[[], None] | None = None) -> subprocess.CompletedProcess:
    """``args`` with a pseudo-terminal as stdout (as a user at a terminal runs it, 200 columns):
    its stdout read as it comes, ANSI codes left out; stderr apart. The first time ``until`` is
    in the output so far, ``then()`` is called once (a test may hold a model until the terminal
    shows something). The process has 300 s in all: a bound, not a measurement."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, env={**env, "COLUMNS": "200", "TERM": "xterm"}, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    raw, called = b"", then is None
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the process closed the terminal
                    break
                if not chunk:
                    break
                raw += chunk
                if not called and until in ANSI.sub("", raw.decode("utf-8", "replace")):
                    called = True
                    then()  # type: ignore[misc]
            elif proc.poll() is not None:
                break
        code = proc.wait(30)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(args, code, ANSI.sub("", raw.decode("utf-8", "replace")),
                                       proc.stderr.read().decode("utf-8", "replace") if proc.stderr else "")
