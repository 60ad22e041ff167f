"""Fixtures for the reliability tests (issue 7): a Neo4j process of our own, stores and
knowledge bases on both backends, and helpers to snapshot a store's complete state.

The Neo4j here is *ours*: started with ``scripts/neo4j start`` on free loopback ports, in a
temporary data dir, with a random password, heap 512m - because the fault tests kill -9 it
and restart it. Without Java / the resolved jars it is skipped locally; under CI=true a
Neo4j that cannot start is a failure, never a silent skip (as in tests/conftest.py).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its cost map

import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kgservice.config import Settings

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "neo4j"
BAD = ROOT / "tests" / "bad_input"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "neo4j_process: starts, kills or restarts a Neo4j server of its own (slow)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fail_or_skip(msg: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {msg}")
    pytest.skip(msg)


@dataclass
class Neo4jProcess:
    """One Neo4j server run by scripts/neo4j; the password lives only in this object."""

    data_dir: Path
    bolt: int
    http: int
    password: str

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt}"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "NEO4J_PASSWORD"}
        env.update(NEO4J_PASSWORD=self.password, KG_NEO4J_HEAP=os.environ.get("KG_TEST_NEO4J_HEAP", "512m"),
                   KG_NEO4J_PAGECACHE="64m")
        return env

    def script(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(SCRIPT), *args], env=self._env(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout)

    def start(self) -> None:
        res = self.script("start", "--data-dir", str(self.data_dir), "--bolt-port", str(self.bolt),
                          "--http-port", str(self.http))
        if res.returncode != 0:
            raise RuntimeError(f"scripts/neo4j start failed:\n{res.stdout.replace(self.password, '***')}")

    def stop(self) -> None:
        self.script("stop", "--data-dir", str(self.data_dir), "--timeout", "30")

    def pid(self) -> int | None:
        try:
            pid = int((self.data_dir / "neo4j.pid").read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if Path(f"/proc/{pid}").exists() else None

    def kill9(self) -> int:
        """SIGKILL the JVM (no shutdown hooks, no checkpoint) and wait until it is gone."""
        pid = self.pid()
        assert pid, "no Neo4j pid to kill"
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                break
            if state == "Z":
                break
            time.sleep(0.05)
        return pid

    def connect(self, **kw: Any):
        from kgservice.stores.neo4j import Neo4jStore

        return Neo4jStore.connect(self.uri, password=self.password, **kw)

    def settings(self, data_dir: Path, **over: Any) -> Settings:
        base = dict(data_dir=data_dir, backend="neo4j", neo4j_uri=self.uri, neo4j_password=self.password,
                    embedder="hash:64", vector_backend="qdrant")
        base.update(over)
        return Settings(**base)


@pytest.fixture(scope="session")
def neo4j_proc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Neo4jProcess]:
    root = tmp_path_factory.mktemp("neo4j-own")
    # a password that starts with "-", always: one random token in 64 does, and scripts/neo4j
    # once passed it to neo4j-admin where it read as an unknown option (the start failed)
    proc = Neo4jProcess(root / "data", free_port(), free_port(), "-" + secrets.token_urlsafe(18))
    try:
        proc.start()
    except Exception as exc:  # no Java, no jars, no Maven: see scripts/neo4j resolve
        _fail_or_skip(f"could not start a Neo4j of our own: {exc}")
    yield proc
    proc.stop()


@pytest.fixture
def neo4j_store(neo4j_proc: Neo4jProcess):
    s = neo4j_proc.connect()
    s.wipe()
    yield s
    s.close()


@pytest.fixture(params=["embedded", "neo4j"])
def backend(request) -> str:
    return request.param


@pytest.fixture
def make_kb(request, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """``make_kb(backend, name="kb", **settings)``: a KnowledgeBase on an empty store of that
    backend (hash embedder, Qdrant local mode under its data dir). Closed after the test."""
    from kgservice.service import KnowledgeBase

    made: list[Any] = []

    def make(backend: str, name: str = "kb", wipe: bool = True, **over: Any):
        data_dir = tmp_path / name
        if backend == "neo4j":
            proc: Neo4jProcess = request.getfixturevalue("neo4j_proc")
            settings = proc.settings(data_dir, **over)
        else:
            settings = Settings(**{**dict(data_dir=data_dir, embedder="hash:64", vector_backend="qdrant"), **over})
        kb = KnowledgeBase(settings)
        if backend == "neo4j" and wipe and not settings.read_only:
            kb.store.wipe()
        made.append(kb)
        return kb

    yield make
    for kb in made:
        kb.close()


def state_of(store) -> dict[str, Any]:
    """Everything observable about a store, in a comparable form."""
    from kgservice.admin.backup import canonical_units

    rows = store.index_rows()
    return {
        "counts": store.counts(),
        "units": canonical_units(store.iter_units()),
        "nodes": sorted((n.id, n.label, n.kind.value) for n in store.iter_nodes()),
        "subject": sorted(rows.subject),
        "context": sorted(rows.context),
        "relations": sorted(set(rows.relations), key=str),
        "superseded_by": sorted(rows.superseded_by),
        "args": sorted(rows.args) if rows.args is not None else None,
        "mods": sorted(rows.mods) if rows.mods is not None else None,
    }
