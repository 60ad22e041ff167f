"""`kg ingest --server URL` submits to a running server (real processes: jobs, waited for, a
summary printed), and beside an embedded `kg serve` every other writing command is refused,
naming the server, before it writes anything (in-process, under the server's real lock)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app
from tests.processes import kg, new_key, serving


def test_ingest_through_a_running_server(embedded_env, tmp_path: Path):
    writer = new_key(embedded_env, "wanda", "writer")
    reader = new_key(embedded_env, "rita", "reader")
    (tmp_path / "more.units").write_text("#m1 {zebrafish} [has] {fins}\n#m2 {zebrafish} [lives in] {water}\n", "utf-8")
    (tmp_path / "bad.units").write_text("#b1 {broken [has] {x}\n", "utf-8")
    with serving(embedded_env) as (base, _, _):
        refused = kg(embedded_env, "ingest", str(tmp_path / "more.units"))
        assert refused.returncode == 1 and f"kg ingest --server {base}" in " ".join(refused.stderr.split())

        done = kg({**embedded_env, "KG_API_KEY": writer}, "ingest", "--server", base, str(tmp_path / "more.units"))
        assert done.returncode == 0, done.stderr
        assert "more.units: done" in done.stdout and "2 units added" in done.stdout, done.stdout
        assert writer not in done.stdout + done.stderr
        h = {"Authorization": f"Bearer {writer}"}
        assert httpx.get(base + "/v1/units/m2", headers=h).json()["subject"] == "zebrafish"

        bad = kg(embedded_env, "ingest", "--server", base, "--key", writer, str(tmp_path / "bad.units"))
        assert bad.returncode == 2 and "422" in bad.stderr and "bad.units" in bad.stderr, bad.stderr
        as_reader = kg(embedded_env, "ingest", "--server", base, "--key", reader, "--json", str(tmp_path / "more.units"))
        assert as_reader.returncode == 2 and "403" in as_reader.stderr and "Traceback" not in as_reader.stderr
        assert httpx.get(base + "/v1/stats", headers=h).json()["units"] == 8 + 2


def test_ingest_server_needs_a_key_and_a_url(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("KG_API_KEY", raising=False)
    (tmp_path / "a.units").write_text("#a1 {a} [has] {b}\n", "utf-8")
    run = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "ingest", "--server", "http://127.0.0.1:9",
                                   str(tmp_path / "a.units")])
    assert run.exit_code == 2 and "KG_API_KEY" in run.output
    run = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "ingest", "--server", "127.0.0.1:9",
                                   "--key", "kg_x_y", str(tmp_path / "a.units")])
    assert run.exit_code == 2 and "http://" in run.output
    run = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "ingest", "--server", "http://127.0.0.1:9",
                                   "--key", "kg_x_y", str(tmp_path / "a.units")])
    assert run.exit_code == 1 and "cannot reach http://127.0.0.1:9" in " ".join(run.output.split())
    assert not (tmp_path / "kg" / "graph").exists()  # nothing opened locally


@pytest.fixture
def held(tmp_path: Path):
    """An embedded data dir with a corpus, one writer key, and the lock a running `kg serve` holds."""
    from kgservice.config import load_settings
    from kgservice.deployment import claim_data_dir

    data = tmp_path / "kg"
    (tmp_path / "c.units").write_text("#c1 {cat} [has] {fur}\n", "utf-8")
    assert CliRunner().invoke(app, ["--data-dir", str(data), "--embedder", "hash:64", "ingest",
                                    str(tmp_path / "c.units")]).exit_code == 0
    settings = load_settings(None).with_overrides(data_dir=data, embedder="hash:64")
    lock = claim_data_dir(settings, "http://127.0.0.1:18099")
    yield data
    if lock is not None:
        lock.release()


def _kg(data: Path, *args: str):
    return CliRunner().invoke(app, ["--data-dir", str(data), "--embedder", "hash:64", *args])


@pytest.mark.parametrize("args,what", [
    (("keys", "revoke", "abcdefgh"), "`kg keys revoke`"),
    (("doctor", "--repair"), "`kg doctor --repair`"),
    (("doctor", "--salvage"), "`kg doctor --salvage`"),
    (("cache", "clear"), "`kg cache clear`"),
    (("sync", "{tmp}"), "`kg sync`"),
    (("forget", "some.md"), "`kg forget`"),
    (("retract", "c1", "--reason", "x"), "`kg retract`"),
    (("undo", "ch1"), "`kg undo`"),
    (("purge", "--retracted-before", "2030-01-01", "--yes"), "`kg purge`"),
    (("export", "{tmp}/g.json"), "`kg export` without --no-memory"),
])
def test_writers_are_refused_beside_a_running_server(held: Path, args, what):
    before = sorted(p.name for p in held.rglob("*"))
    run = _kg(held, *(a.replace("{tmp}", str(held.parent)) for a in args))
    line = " ".join(run.output.split())
    assert run.exit_code == 1 and f"{what} refused" in line and "http://127.0.0.1:18099" in line, line
    assert "Nothing was written" in line
    assert sorted(p.name for p in held.rglob("*")) == before
    assert not (held.parent / "g.json").exists()


def test_the_first_admin_key_may_be_made_beside_a_server_the_next_not(held: Path):
    # before any admin exists, only an admin key: anyone with file access beside the server
    # could otherwise mint reader / writer keys the server never issued
    for role in ("reader", "writer"):
        early = _kg(held, "keys", "create", "--user", "mallory", "--role", role)
        line = " ".join(early.output.split())
        assert early.exit_code == 1 and f"`kg keys create --role {role}` refused" in line, line
        assert "`kg keys create --role admin` may make the first one" in line and "Nothing was written" in line
    assert json.loads(_kg(held, "keys", "list", "--json").output) == []
    bad = _kg(held, "keys", "create", "--user", "x", "--role", "root")
    assert bad.exit_code == 2 and "role must be one of" in " ".join(bad.output.split())
    first = _kg(held, "keys", "create", "--user", "root", "--role", "admin")
    assert first.exit_code == 0, first.output  # no admin yet: a keyless server could never make one
    for args in (("--role", "admin"), ()):  # the role defaults to reader
        again = _kg(held, "keys", "create", "--user", "x", *args)
        line = " ".join(again.output.split())
        assert again.exit_code == 1 and "`kg keys create --role" in line and "refused" in line, line
        assert "POST http://127.0.0.1:18099/v1/admin/keys with an admin key" in line
    assert [k["role"] for k in json.loads(_kg(held, "keys", "list", "--json").output)] == ["admin"]
    assert _kg(held, "doctor", "--no-vectors").exit_code == 0  # reading beside it is fine
    assert _kg(held, "keys", "list", "--json").exit_code == 0
    assert json.loads(_kg(held, "stats", "--json").output)["units"] == 1
