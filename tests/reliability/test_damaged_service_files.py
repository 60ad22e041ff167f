"""A damaged jobs.sqlite3 / keys.sqlite3 / graph/changes.sqlite3: commands name the file (not the
vector store), /readyz is not ready, and ``kg doctor`` finds it and ``--repair`` rebuilds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.config import Settings
from kgservice.server import ServeOptions, create_app

UNITS = "#t1 {tea} [contains] {caffeine}\n#t2 {coffee} [contains] {caffeine}\n"


def kg(data_dir: Path, *args: str):
    return CliRunner().invoke(app, ["--data-dir", str(data_dir), "--embedder", "hash:64", *args])


def damage(path: Path) -> None:
    """Flip every 397th byte after the header, as the probe did."""
    data = bytearray(path.read_bytes())
    for i in range(100, len(data), 397):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    d = tmp_path / "kg"
    (tmp_path / "t.units").write_text(UNITS, "utf-8")
    assert kg(d, "ingest", str(tmp_path / "t.units")).exit_code == 0
    r = kg(d, "keys", "create", "--user", "ann", "--role", "writer")
    assert r.exit_code == 0, r.output
    from kgservice.service import KnowledgeBase

    kb = KnowledgeBase(Settings(data_dir=d, embedder="hash:64"))
    try:
        for i in range(30):  # enough rows that the file has pages to damage
            kb.jobs.submit("ingest", {"units": f"#j{i} {{tea {i}}} [has] {{x}}", "doc": "j"}, "ann", None)
    finally:
        kb.close()
    return d


@pytest.mark.parametrize("name, command", [
    ("jobs.sqlite3", ["jobs", "list"]),
    ("keys.sqlite3", ["keys", "list"]),
    ("graph/changes.sqlite3", ["expand", "tea"]),
])
def test_damaged_file_is_named_and_doctor_rebuilds_it(store: Path, name: str, command: list[str]):
    path = store / name
    assert path.exists(), name
    damage(path)
    r = kg(store, *command)
    assert r.exit_code == 1 and "vector store" not in r.output, r.output
    assert path.name in r.output and "kg doctor --repair" in r.output, r.output
    report = kg(store, "doctor", "--json", "--no-vectors")
    assert report.exit_code != 0
    found = json.loads(report.stdout)["findings"]
    assert [f["check"] for f in found] == ["service_files"], found
    assert path.name in found[0]["examples"][0]
    fixed = kg(store, "doctor", "--repair", "--json", "--no-vectors")
    assert fixed.exit_code == 0, fixed.output
    assert list(store.glob(f"{name}.damaged-*")), "the damaged file is kept aside"
    assert kg(store, "doctor", "--json", "--no-vectors").exit_code == 0
    assert kg(store, *command).exit_code == 0
    assert json.loads(kg(store, "stats", "--json").stdout)["units"] == 2  # the knowledge is untouched


def test_readyz_names_a_damaged_jobs_file(store: Path):
    damage(store / "jobs.sqlite3")
    settings = Settings(data_dir=store, embedder="hash:64")
    with TestClient(create_app(settings, ServeOptions()), base_url="http://127.0.0.1") as c:
        r = c.get("/readyz")
    assert r.status_code == 503, r.json()
    assert "jobs.sqlite3" in r.json()["checks"]["files"]


def test_server_names_a_damaged_jobs_file_in_the_envelope(store: Path):
    damage(store / "jobs.sqlite3")
    settings = Settings(data_dir=store, embedder="hash:64", local_role="writer", rate_limit=0.0)
    with TestClient(create_app(settings, ServeOptions(no_auth=True)), base_url="http://127.0.0.1") as c:
        r = c.post("/v1/ingest", json={"units": "#z1 {tea} [has] {milk}"})
        assert r.status_code == 503 and r.json()["status"] == 503, r.text
        assert "jobs.sqlite3" in r.json()["detail"] and "kg doctor --repair" in r.json()["detail"]
        assert c.get("/v1/stats").status_code == 200  # reads do not depend on the job queue


@pytest.mark.parametrize("name, args", [("jobs.sqlite3", ["--no-auth"]), ("keys.sqlite3", [])])
def test_kg_serve_on_a_damaged_service_file_says_so_in_one_line(store: Path, name: str, args: list[str]):
    """J01: with jobs.sqlite3 damaged `kg serve` died at startup with exit 3 and a 60-line
    ExceptionGroup traceback (the useful line buried inside); keys.sqlite3 gave one line. Both are
    one `error:` line naming the file and `kg doctor --repair`, exit 1, before serving."""
    import subprocess

    from tests.processes import KG, env_for, free_port

    damage(store / name)
    done = subprocess.run([*KG, "serve", *args, "--port", str(free_port())],
                          env=env_for(store, KG_EMBEDDER="hash:64"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "Application startup failed" not in done.stderr, done.stderr
    [line] = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert name in line and "is damaged" in line and "kg doctor --repair" in line, done.stderr
