"""Neo4j faults against the real server: unreachable at start, the connection cut mid-ingest
(a TCP proxy we control), and the JVM killed with SIGKILL mid-transaction and restarted by
scripts/neo4j. A batch is always fully in or fully out, and running it again completes it."""

from __future__ import annotations

import select
import socket
import threading
import re

import pytest
from typer.testing import CliRunner

from kgservice.admin import doctor
from kgservice.cli.app import app
from kgservice.notation import parse_units
from kgservice.stores.neo4j import writes as neo4j_writes
from kgservice.stores.base import StoreError
from kgservice.stores.neo4j import Neo4jStore, Neo4jUnavailable
from tests.contract.corpus import SMALL
from tests.reliability.conftest import free_port, state_of

pytestmark = pytest.mark.neo4j


def batch(lexicon, n: int, prefix: str = "f"):
    """n units over a shared vocabulary (hubs), with modifiers, relations and supersessions."""
    lines = []
    for i in range(n):
        lines.append(f"#{prefix}{i} {{{prefix} item {i}}} [{'has' if i % 3 else 'causes'}] {{hub {i % 50}}} ({i})")
        if i % 7 == 0:
            lines.append(f"    ()[source] {{doc {i % 11}}}")
        if i % 10 == 9:
            lines.append(f"    ()[supersedes] #{prefix}{i - 1}")
    return parse_units("\n".join(lines) + "\n", lexicon, doc=f"{prefix}.units")


class Proxy:
    """A TCP forwarder to Neo4j that can cut every connection and refuse new ones."""

    def __init__(self, upstream: int):
        self.upstream = upstream
        self.port = free_port()
        self.refusing = threading.Event()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._srv = socket.create_server(("127.0.0.1", self.port))
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self._srv.accept()
            except OSError:
                return
            if self.refusing.is_set():
                client.close()
                continue
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, up]
            threading.Thread(target=self._pump, args=(client, up), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                ready, _, _ = select.select([a, b], [], [], 0.5)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except (OSError, ValueError):  # ValueError: the socket was closed by cut()
            return
        finally:
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass

    def cut(self, refuse_for: float | None) -> None:
        """Drop every open connection; refuse new ones for ``refuse_for`` seconds (None: until resume)."""
        self.refusing.set()
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        if refuse_for is not None:
            threading.Timer(refuse_for, self.refusing.clear).start()

    def resume(self) -> None:
        self.refusing.clear()

    def close(self) -> None:
        self._stop = True
        self.cut(None)
        self._srv.close()


@pytest.fixture
def proxy(neo4j_proc):
    p = Proxy(neo4j_proc.bolt)
    yield p
    p.close()


# -- unreachable at start ---------------------------------------------------------------------

def test_unreachable_at_start_clear_message_bounded_retries():
    port = free_port()  # nothing listens here
    with pytest.raises(Neo4jUnavailable) as ei:
        Neo4jStore.connect(f"bolt://127.0.0.1:{port}", password="not-a-real-secret-1", attempts=3)
    msg = str(ei.value)
    # bounded: three attempts, counted in the message (not timed: a loaded machine is slow, not wrong)
    assert f"bolt://127.0.0.1:{port}" in msg and "did not answer after 3 attempts" in msg and "scripts/neo4j" in msg
    assert "not-a-real-secret-1" not in msg


def test_unreachable_at_start_through_the_cli(tmp_path):
    env = {"KG_BACKEND": "neo4j", "KG_NEO4J_URI": f"bolt://127.0.0.1:{free_port()}", "NEO4J_PASSWORD": "cli-secret-123456"}
    r = CliRunner().invoke(app, ["--data-dir", str(tmp_path), "stats"], env=env)
    assert r.exit_code == 1 and "did not answer" in r.stderr and "Traceback" not in r.output
    assert "cli-secret-123456" not in r.output


def test_server_that_comes_up_during_the_retries_is_used(neo4j_proc, proxy):
    proxy.cut(refuse_for=1.5)  # "still starting"
    store = Neo4jStore.connect(proxy.uri, password=neo4j_proc.password, attempts=6)
    try:
        assert store.counts()["units"] >= 0
    finally:
        store.close()


# -- the connection cut mid-ingest -------------------------------------------------------------

def test_connection_cut_mid_ingest_retry_completes_it(neo4j_proc, proxy, lexicon, monkeypatch, make_kb):
    monkeypatch.setattr(neo4j_writes, "BATCH_ROWS", 500)  # several statements per transaction
    seed = neo4j_proc.connect()
    seed.wipe()
    seed.ingest(parse_units(SMALL, lexicon))
    seed.close()
    store = Neo4jStore.connect(proxy.uri, password=neo4j_proc.password, ingest_attempts=8, ingest_max_seconds=60,
                               max_transaction_retry_time=1.0, connection_timeout=30.0)
    units = batch(lexicon, 1500)
    cuts = []

    def progress(n: int) -> None:
        if not cuts:  # inside the transaction, after the first 500 units were sent
            cuts.append(n)
            proxy.cut(refuse_for=2.0)

    try:
        report = store.ingest(units, progress=progress)
    finally:
        store.close()
    assert cuts, "the connection was never cut"
    assert report.units_added == 1500
    kb = make_kb("neo4j", wipe=False)
    assert kb.store.counts()["units"] == 1500 + 18
    assert doctor.check(kb, vectors=False).ok


def test_connection_lost_for_good_fails_clearly_then_retry_completes(neo4j_proc, proxy, lexicon, monkeypatch, make_kb):
    monkeypatch.setattr(neo4j_writes, "BATCH_ROWS", 500)
    kb = make_kb("neo4j")
    kb.store.ingest(parse_units(SMALL, lexicon))
    before = state_of(kb.store)
    # the proxy refuses at once (no timeout to wait out), so generous bounds cost the failing
    # half nothing and keep the recovering half from racing a loaded machine
    store = Neo4jStore.connect(proxy.uri, password=neo4j_proc.password, ingest_attempts=3, ingest_max_seconds=120,
                               ingest_wait_max=0.5, max_transaction_retry_time=0.5, connection_timeout=30.0)
    units = batch(lexicon, 1500)
    with pytest.raises(Neo4jUnavailable) as ei:
        store.ingest(units, progress=lambda n: proxy.cut(refuse_for=None))
    msg = str(ei.value)
    # bounded by its attempts (3) and its own deadline, not timed here: a loaded machine is slow, not wrong
    assert re.search(r"failed after [123] attempt\(s\)", msg) and store.ingest_retries <= 2, msg
    assert "either fully stored or not at all" in msg and "run the same ingest again" in msg
    assert neo4j_proc.password not in msg
    assert state_of(kb.store) == before  # fully out
    proxy.resume()
    assert store.ingest(units).units_added == 1500
    store.close()
    assert kb.store.counts()["units"] == 18 + 1500 and doctor.check(kb, vectors=False).ok


def test_queries_during_an_outage_fail_with_a_clear_error(neo4j_proc, proxy):
    store = Neo4jStore.connect(proxy.uri, password=neo4j_proc.password, max_transaction_retry_time=5.0,
                               connection_timeout=30.0)  # refused at once while cut: bounds for the recovery
    try:
        proxy.cut(refuse_for=None)
        with pytest.raises(Neo4jUnavailable, match="is not answering"):
            store.subject_mentions("cat")
        proxy.resume()
        assert store.subject_mentions("nothing") == []
    finally:
        store.close()


# -- the JVM killed mid-transaction -------------------------------------------------------------

@pytest.mark.neo4j_process
def test_kill9_mid_ingest_then_restart_all_or_nothing_and_retry(neo4j_proc, lexicon, monkeypatch, make_kb):
    monkeypatch.setattr(neo4j_writes, "BATCH_ROWS", 500)
    kb = make_kb("neo4j")
    kb.store.ingest(parse_units(SMALL, lexicon))
    before = state_of(kb.store)
    kb.close()
    store = neo4j_proc.connect(ingest_attempts=2, ingest_max_seconds=5, ingest_wait_max=0.5,
                               max_transaction_retry_time=1.0, connection_timeout=30.0)
    units = batch(lexicon, 1500, prefix="k")
    killed: list[int] = []

    def progress(n: int) -> None:
        if not killed:  # 500 units sent inside the open transaction: pull the plug
            killed.append(neo4j_proc.kill9())

    try:
        with pytest.raises(StoreError) as ei:
            store.ingest(units, progress=progress)
    finally:
        store.close()
        assert killed, "the server was never killed"
        neo4j_proc.start()  # scripts/neo4j start: recovery of the store, then ready
    assert "either fully stored or not at all" in str(ei.value)
    assert neo4j_proc.pid() not in (None, killed[0])
    again = make_kb("neo4j", name="after", wipe=False)
    assert state_of(again.store) == before  # nothing of the killed batch is visible
    report = again.store.ingest(units)
    assert report.units_added == 1500 and report.units_unchanged == 0
    assert again.store.counts()["units"] == 1500 + 18
    assert doctor.check(again, vectors=False).ok
    assert again.store.ingest(units).units_unchanged == 1500  # and the retry of the retry is a no-op
