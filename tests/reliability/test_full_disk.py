"""A full or read-only disk (issue 13: E06, E07, E08, E09, E11), on a real small file system:
a tmpfs mounted for the test. That needs root (or CAP_SYS_ADMIN); where mounting is impossible
the tests skip and say so - there is no simulated stand-in for them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgservice.stores.changelog import CHANGES_FILE
from kgservice.cli.app import app
from tests.contract.corpus import SMALL


@pytest.fixture()
def mount_tmpfs(tmp_path):
    mounted: list[Path] = []

    def mount(size_kb: int) -> Path:
        d = tmp_path / f"fs-{uuid.uuid4().hex[:8]}"
        d.mkdir()
        if shutil.which("mount") is None:
            pytest.skip("no mount command: a small file system cannot be made here")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(d)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN): {r.stderr.strip()}")
        mounted.append(d)
        return d

    yield mount
    for d in mounted:
        subprocess.run(["umount", "-l", str(d)], capture_output=True)


def remount(d: Path, opts: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{opts}", str(d)], check=True, capture_output=True)


def kg(data_dir: Path, *args, env=None):
    # These tests are about the graph store and the caches on a full disk; the vectors go to
    # qdrant-client's local mode (plain file writes that fail cleanly). qdrant-edge, the default,
    # refuses a nearly full disk up front: test_edge_vectors_refuse_a_nearly_full_disk.
    return CliRunner().invoke(app, ["--data-dir", str(data_dir), "--embedder", "hash:64", *args],
                              env={"KG_VECTOR_BACKEND": "qdrant", **(env or {})})


def units_of(data_dir: Path) -> int:
    r = kg(data_dir, "stats", "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["units"]


def unit_lines(dump: Path) -> list[str]:
    return sorted(ln for ln in dump.read_text("utf-8").splitlines() if ln.startswith('{"unit"'))


@pytest.fixture(scope="module")
def big_dump(tmp_path_factory) -> Path:
    """20 000 units (about 5 MB of JSON lines), made on the ordinary disk."""
    d = tmp_path_factory.mktemp("big")
    f = d / "big.units"
    # 20 000 distinct facts (2 000 subjects, 3 000 objects): a repeated fact would be merged at ingest
    f.write_text("".join(f"#b{i} {{n{i // 10}}} [causes] {{m{i % 3000}}}\n" for i in range(20000)), "utf-8")
    assert kg(d / "kg", "ingest", "--no-embed", str(f)).exit_code == 0
    out = d / "big.jsonl"
    assert kg(d / "kg", "dump", str(out)).exit_code == 0
    return out


def _small_store(data_dir: Path, tmp: Path) -> Path:
    f = tmp / "small.units"
    f.write_text(SMALL, "utf-8")
    r = kg(data_dir, "ingest", str(f))
    assert r.exit_code == 0, r.output
    before = tmp / f"before-{uuid.uuid4().hex[:6]}.jsonl"
    assert kg(data_dir, "dump", str(before)).exit_code == 0
    return before


def test_restore_replace_refused_up_front_when_it_cannot_fit(mount_tmpfs, big_dump, tmp_path):
    """E09: 4 MB free, a 5 MB dump: refused before anything is written, old store whole."""
    fs = mount_tmpfs(4096)
    data = fs / "d"
    before = _small_store(data, tmp_path)
    r = kg(data, "restore", str(big_dump), "--replace", "--yes", "--no-embed")
    assert r.exit_code == 1 and "Traceback" not in r.output
    msg = " ".join(r.stderr.split())
    assert "needs about" in msg and "Nothing was changed" in msg
    assert units_of(data) == 18
    kg(data, "dump", str(tmp_path / "after.jsonl"))
    assert unit_lines(tmp_path / "after.jsonl") == unit_lines(before)
    assert kg(data, "doctor").exit_code == 0


def test_restore_replace_hitting_a_full_disk_keeps_the_old_store(mount_tmpfs, big_dump, tmp_path, monkeypatch):
    """E09 for real: the space estimate is switched off, so the new store fills the disk while it
    is built beside the old one. The old store survives whole; the partial new one is removed."""
    from kgservice.admin import recover

    monkeypatch.setattr(recover, "STORE_BYTES_PER_DUMP_BYTE", 0.0)
    monkeypatch.setattr(recover, "SLACK_BYTES", 0)
    fs = mount_tmpfs(3072)
    data = fs / "d"
    before = _small_store(data, tmp_path)
    r = kg(data, "restore", str(big_dump), "--replace", "--yes", "--no-embed")
    assert r.exit_code == 1 and "Traceback" not in r.output
    msg = " ".join(r.stderr.split())
    assert "No space left on device" in msg and "the old store is unchanged" in msg
    assert not list(data.glob("graph.building-*"))
    assert units_of(data) == 18
    kg(data, "dump", str(tmp_path / "after.jsonl"))
    assert unit_lines(tmp_path / "after.jsonl") == unit_lines(before)
    assert kg(data, "doctor").exit_code == 0


def test_restore_replace_with_room_swaps(mount_tmpfs, big_dump, tmp_path):
    fs = mount_tmpfs(40 * 1024)
    data = fs / "d"
    _small_store(data, tmp_path)
    r = kg(data, "restore", str(big_dump), "--replace", "--yes", "--no-embed")
    assert r.exit_code == 0, r.output
    assert units_of(data) == 20000
    assert sorted(p.name for p in data.iterdir() if p.name.startswith("graph")) == ["graph"]


DEMO = Path(__file__).resolve().parents[2] / "demo" / "units"
ASK = {"KG_LLM_MODEL": "kgoffline/rules"}


def _fill(fs: Path, leave: int = 0) -> None:
    """Take every free byte but ``leave`` (the file goes with the mount)."""
    with open(fs / "filler", "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * (64 << 10))
                fh.flush()
        except OSError:
            pass
        try:
            os.fsync(fh.fileno())
        except OSError:
            pass
        if leave:
            fh.truncate(max(0, fh.tell() - leave))


def test_full_disk_ingest_repair_and_ask(mount_tmpfs, tmp_path):
    """E06 / E07 / E08: with the disk full, ingest / doctor --repair / ask gave tracebacks
    (sqlite3.OperationalError from the vector store or the query cache)."""
    fs = mount_tmpfs(16 * 1024)
    data = fs / "d"
    assert kg(data, "ingest", str(DEMO)).exit_code == 0
    n = units_of(data)
    g = tmp_path / "g.units"
    g.write_text("".join(f"#g{i} {{gn{i}}} [causes] {{gm{i % 100}}}\n" for i in range(3000)), "utf-8")
    _fill(fs)
    r = kg(data, "ingest", str(g))  # E05: the batch's first write (its change log entry) fails: named, nothing stored
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    msg = " ".join(r.stderr.split())
    assert f"graph/{CHANGES_FILE}" in msg and "full" in msg and "was not stored" in msg
    assert units_of(data) == n
    (fs / "filler").unlink()
    _fill(fs, leave=1 << 20)  # room for the graph batch, not for its 3000 vectors
    r = kg(data, "ingest", str(g))  # E06
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    msg = " ".join(r.stderr.split())
    assert "kg doctor --repair" in msg and "free space" in msg
    assert units_of(data) == n + 3000  # the graph batch landed whole before the vectors failed
    r = kg(data, "doctor", "--repair")  # E07
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    r = kg(data, "ask", "What does smoking cause?", env=ASK)  # E08: a read; its cache cannot be written
    assert "Traceback" not in r.output, r.output
    assert r.exit_code == 0, r.output
    assert "lung cancer" in r.stdout.lower()
    (fs / "filler").unlink()
    assert kg(data, "doctor", "--repair").exit_code == 0
    assert kg(data, "doctor").exit_code == 0


def test_read_only_disk_reads_work(mount_tmpfs, tmp_path):
    """E11: `kg ask` on a read-only data directory died writing its cache counters."""
    fs = mount_tmpfs(16 * 1024)
    data = fs / "d"
    assert kg(data, "ingest", str(DEMO)).exit_code == 0
    assert kg(data, "ask", "What does smoking cause?", env=ASK).exit_code == 0  # the cache file exists
    remount(fs, "ro")
    for args in (["stats"], ["expand", "smoking"], ["cache", "stats"]):
        r = kg(data, *args)
        assert r.exit_code == 0, (args, r.output)
    r = kg(data, "ask", "What does smoking cause?", env=ASK)
    assert "Traceback" not in r.output, r.output
    if r.exit_code == 0:
        assert "lung cancer" in r.stdout.lower()
    else:  # the vector store's lock file cannot be created on a read-only disk: a clear error
        assert r.exit_code == 1 and "Read-only file system" in r.stderr
    f = tmp_path / "x.units"
    f.write_text("#ro1 {a} [has] {b}\n", "utf-8")
    r = kg(data, "ingest", str(f))
    assert r.exit_code == 1 and "Traceback" not in r.output and "read-only" in r.stderr.lower(), r.output


def test_edge_vectors_refuse_a_nearly_full_disk(mount_tmpfs, tmp_path):
    """qdrant-edge maps its files into memory: on a full tmpfs a write to such a page killed the
    whole process with SIGBUS. Below 64 MiB free it refuses instead: the ingest stores its units
    (graph first), says why the vectors were not written and what to run, exits 1, no crash."""
    import os
    import subprocess
    import sys

    fs = mount_tmpfs(8192)
    (tmp_path / "small.units").write_text(SMALL, "utf-8")
    env = {**os.environ, "KG_VECTOR_BACKEND": "edge"}
    cmd = [sys.executable, "-c", "from kgservice.cli.app import main; main()", "--data-dir", str(fs / "d"),
           "--embedder", "hash:64"]
    r = subprocess.run([*cmd, "ingest", str(tmp_path / "small.units")], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1, (r.returncode, r.stderr)  # not -7 (SIGBUS)
    msg = " ".join(r.stderr.split())
    assert "MiB free" in msg and "kg doctor --repair" in msg and "Traceback" not in r.stderr
    r = subprocess.run([*cmd, "stats", "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and json.loads(r.stdout)["units"] == 18  # the graph batch landed whole


def test_embedded_server_reads_work_on_a_full_disk(mount_tmpfs):
    """D01: with the disk filled under a running embedded server, reads still answer; a write
    is refused with the error envelope, not a plain-text 500."""
    from fastapi.testclient import TestClient

    from kgservice.config import Settings
    from kgservice.server import ServeOptions, create_app

    fs = mount_tmpfs(16 * 1024)
    data = fs / "d"
    assert kg(data, "ingest", str(DEMO)).exit_code == 0
    settings = Settings(data_dir=data, embedder="hash:64", vector_backend="qdrant", rate_limit=0.0,
                        local_role="writer")
    with TestClient(create_app(settings, ServeOptions(no_auth=True)), base_url="http://127.0.0.1") as c:
        assert c.post("/v1/search", json={"query": "smoking"}).status_code == 200
        _fill(fs)
        stats = c.get("/v1/stats")
        assert stats.status_code == 200, stats.text
        search = c.post("/v1/search", json={"query": "lung cancer"})
        assert search.status_code == 200, search.text
        w = c.post("/v1/ingest", json={"units": "#df1 {tea} [has] {caffeine}"})
        assert w.status_code in (202, 503, 507) and w.headers["content-type"].startswith("application/json"), w.text
        assert "status" in w.json()


def test_the_change_log_is_read_on_a_disk_that_filled_before_it_was_opened(mount_tmpfs):
    """D01: a server that opens the change log after the disk filled could not read it: opening a
    WAL database creates its index file (-shm), which fails there ("disk I/O error"), and every
    read (GET /v1/stats, POST /v1/search) answered 500. The log reads; a write says the disk is
    full (ENOSPC, which the server answers with 507)."""
    import errno as errno_

    from kgservice.errors import ServiceFileError
    from kgservice.stores.changelog import SqliteChangeFeed, record_embedded_change

    fs = mount_tmpfs(4096)
    store = fs / "graph"
    store.mkdir()
    for i in range(5):
        record_embedded_change(store, [f"n{i}"])
    _fill(fs)
    feed = SqliteChangeFeed(store)
    try:
        assert feed.version() == 5
        assert [c.touched for c in feed.since(3, 5)] == [["n3"], ["n4"]]
        with pytest.raises(ServiceFileError) as failed:
            record_embedded_change(store, ["n5"])
        assert failed.value.errno == errno_.ENOSPC and "full" in str(failed.value)
        (fs / "filler").unlink()
        record_embedded_change(store, ["n5"])  # room again: the usual connection, the new version
        assert feed.version() == 6
    finally:
        feed.close()


def test_a_kg_serve_whose_disk_fills_answers_reads_and_refuses_writes_with_507(mount_tmpfs, tmp_path):
    """D01 with a real `kg serve`: the disk fills before the server's first request; reads answer
    200, writes 507 in the JSON envelope saying the disk is full, and the log has no traceback."""
    import httpx

    from tests.processes import env_for, free_port, stop

    fs = mount_tmpfs(16 * 1024)
    data = fs / "d"
    assert kg(data, "ingest", str(DEMO)).exit_code == 0
    env = env_for(data, KG_VECTOR_BACKEND="qdrant", KG_EMBEDDER="hash:64")
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([*__import__("tests.processes", fromlist=["KG"]).KG, "serve", "--no-auth", "--port",
                                 str(port)], env={**env, "KG_LOCAL_ROLE": "writer"}, stdout=out,
                                stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = __import__("time").monotonic() + 120  # bounds a hang only
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(base + "/livez", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert __import__("time").monotonic() < deadline, "kg serve did not start"
            __import__("time").sleep(0.3)
        _fill(fs)
        stats = httpx.get(base + "/v1/stats", timeout=60)
        assert stats.status_code == 200 and stats.json()["units"] > 700, stats.text
        search = httpx.post(base + "/v1/search", json={"query": "lung cancer"}, timeout=60)
        assert search.status_code == 200, search.text
        for method, path, body in (("POST", "/v1/ingest", {"units": "#df1 {tea} [has] {caffeine}"}),
                                   ("PUT", "/v1/documents/df.units", {"text": "{tea} [has] {milk}\n"})):
            w = httpx.request(method, base + path, json=body, timeout=60)
            assert w.status_code == 507, w.text
            assert w.json()["status"] == 507 and "free space" in w.json()["detail"]
        assert httpx.get(base + "/v1/stats", timeout=60).status_code == 200
    finally:
        if proc.poll() is None:
            stop(proc, 20)
    assert "Traceback" not in log.read_text(), log.read_text()


def test_the_full_disk_read_of_the_change_log_is_never_behind_its_write_ahead_file(tmp_path, monkeypatch):
    """The full-disk read opens the change log as an immutable file, which reads the main file only.
    That is exact when no write-ahead (-wal) file is left, which is the case it is for: opening the
    log failed because the -wal file could not be made. Should it meet committed changes still in a
    -wal file (another process holds the log open, so nothing checkpointed them), it would answer
    an old version and caches stamped with it would be behind the data; it must refuse instead.
    The usual open is made to fail as a full disk makes it fail."""
    import errno as errno_
    import sqlite3

    from kgservice.errors import ServiceFileError
    from kgservice.stores import changelog
    from kgservice.stores.changelog import SqliteChangeFeed, record_embedded_change

    store = tmp_path / "graph"
    store.mkdir()
    for i in range(5):
        record_embedded_change(store, [f"n{i}"])  # each closes its connection: checkpointed, no -wal left

    def refused(path):
        raise ServiceFileError("the disk is full", path=path, errno=errno_.ENOSPC)

    monkeypatch.setattr(changelog, "_connect", refused)
    feed = SqliteChangeFeed(store)
    try:
        assert feed.version() == 5  # nothing in a -wal file: the immutable read is exact
    finally:
        feed.close()

    holder = sqlite3.connect(store / CHANGES_FILE)  # keeps the next changes in the -wal file
    try:
        holder.execute("SELECT count(*) FROM changes").fetchall()  # opened for real: a reader of the log
        monkeypatch.undo()
        for i in range(5, 8):
            record_embedded_change(store, [f"n{i}"])
        assert (store / (CHANGES_FILE + "-wal")).stat().st_size > 0
        monkeypatch.setattr(changelog, "_connect", refused)
        feed = SqliteChangeFeed(store)
        try:
            with pytest.raises(ServiceFileError) as failed:
                feed.version()  # the main file alone says 5; the log holds 8
            assert failed.value.errno == errno_.ENOSPC and "write-ahead" in str(failed.value)
        finally:
            feed.close()
    finally:
        holder.close()
