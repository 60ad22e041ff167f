"""Workspaces (docs/workspaces.md) answer the same on both backends where a command must not go
on: a read of a workspace nobody made is refused (exit 2, naming it and how to list them), never
an empty answer; a restore, rename or delete of a workspace a running ``kg serve`` serves is
refused (exit 1) and changes nothing, on the embedded store (the server's lock) as on Neo4j (the
server's heartbeat in the store). Every refusal is checked against what the store still holds."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.neo4j_helpers import wipe_all

MARKER = "zqxvortmarker"
B_UNITS = f"#w2 {{smoking}} [causes] {{{MARKER}}}\n#w3 {{{MARKER}}} [part of] {{tobacco smoke}}\n"
LATER = "#w4 {tar} [part of] {tobacco smoke}\n"


def _env(backend: str, tmp_path: Path, request: Any) -> dict[str, str]:
    from tests.processes import env_for, neo4j_env

    if backend == "embedded":
        return env_for(tmp_path / "kg")
    if not os.environ.get("KG_TEST_NEO4J_URI") and os.environ.get("CI") != "true":
        pytest.skip("no Neo4j: set KG_TEST_NEO4J_URI (and NEO4J_PASSWORD) after `scripts/neo4j start`")
    wipe_all(request.getfixturevalue("neo4j_connection"))
    return neo4j_env(tmp_path / "kg", KG_VECTOR_BACKEND="neo4j")


def _units(env: dict[str, str], workspace: str) -> list[str]:
    """Which of the tests' unit ids ``workspace`` holds, each read through the CLI (``kg show``),
    and that its unit count says no more."""
    from tests.processes import kg

    held = [u for u in ("w2", "w3", "w4") if kg(env, "--workspace", workspace, "show", u).returncode == 0]
    stats = kg(env, "--workspace", workspace, "stats", "--json")
    assert stats.returncode == 0 and json.loads(stats.stdout)["units"] == len(held), stats.stderr
    return held


@pytest.mark.parametrize("backend", ["embedded", "neo4j"])
def test_a_read_of_a_workspace_nobody_made_is_refused_on_both_backends(tmp_path: Path, backend: str, request):
    """Every read command on ``team-x`` (never created) exits 2 with the same message on both
    backends, prints no answer and creates nothing; ``kg --workspace team-x init`` makes it, after
    which the same read answers (empty). Over REST a key holding every workspace gets 404 for it,
    as for a workspace it does not hold."""
    from tests.processes import kg, new_key, serving

    env = _env(backend, tmp_path, request)
    src = tmp_path / "b.units"
    src.write_text(B_UNITS, "utf-8")
    assert kg(env, "--workspace", "team-b", "ingest", str(src)).returncode == 0
    for read in (["stats"], ["expand", "smoking"], ["search", "smoking"], ["show", "w2"], ["docs", "list"],
                 ["history"], ["ask", "What does smoking cause?"], ["jobs", "list"], ["export", str(tmp_path / "g.json")],
                 ["dump", str(tmp_path / "x.dump")]):
        done = kg(env, "--workspace", "team-x", *read)
        assert done.returncode == 2, (read, done.returncode, done.stdout, done.stderr)
        assert "no workspace 'team-x'" in done.stderr and "kg workspaces list" in done.stderr, (read, done.stderr)
        assert done.stdout.strip() == "", (read, done.stdout)
    listed = kg(env, "workspaces", "list", "--json")
    assert json.loads(listed.stdout) == ["default", "team-b"], listed.stderr  # the reads made nothing
    assert kg(env, "--workspace", "team-x", "init").returncode == 0
    made = kg(env, "--workspace", "team-x", "stats", "--json")
    assert made.returncode == 0 and json.loads(made.stdout)["units"] == 0, made.stderr
    assert _units(env, "team-b") == ["w2", "w3"]

    admin = new_key(env, "root", "admin")
    assert kg(env, "workspaces", "create", "team-y").returncode == 0
    with serving(env) as (base, _, _):
        head = {"Authorization": f"Bearer {admin}"}
        assert httpx.get(f"{base}/w/team-y/v1/stats", headers=head, timeout=60).status_code == 404  # not its key's
        for path in ("/v1/stats", "/v1/units/w2", "/v1/documents"):
            gone = httpx.get(f"{base}/w/team-nope{path}", headers=head, timeout=60)
            assert gone.status_code == 404 and "team-nope" in gone.json()["detail"], (path, gone.text)


def _served(backend: str, request: Any, workspace: str) -> None:
    """Once the server's hold on ``workspace`` is visible to other processes: on Neo4j its
    heartbeat in the store (written beside the port opening); the embedded lock is taken before
    the port opens."""
    if backend != "neo4j":
        return
    store = request.getfixturevalue("neo4j_connection")
    deadline = time.monotonic() + 120  # only bounds a hang
    while not store.workspace_served(workspace):
        assert time.monotonic() < deadline, "the server's heartbeat never came"
        time.sleep(0.2)


@pytest.mark.parametrize("backend", ["embedded", "neo4j"])
def test_a_served_workspace_is_not_restored_renamed_or_deleted_on_both_backends(tmp_path: Path, backend: str,
                                                                                 request):
    """While ``kg --workspace team-b serve`` runs: restoring team-b (replace, merge, or as part of
    --all-workspaces), renaming and deleting it exit 1 naming the workspace, and team-b and
    default keep exactly their units; team-a, which that server does not serve, is restored.
    Once the server stops the same restore goes through."""
    from tests.processes import kg, serving

    env = _env(backend, tmp_path, request)
    b_file, later = tmp_path / "b.units", tmp_path / "later.units"
    b_file.write_text(B_UNITS, "utf-8")
    later.write_text(LATER, "utf-8")
    assert kg(env, "--workspace", "team-b", "ingest", str(b_file)).returncode == 0
    assert kg(env, "ingest", str(later)).returncode == 0  # default holds w4
    dump, whole = tmp_path / "b.dump", tmp_path / "all"
    assert kg(env, "--workspace", "team-b", "dump", str(dump)).returncode == 0
    assert kg(env, "dump", "--all-workspaces", str(whole)).returncode == 0
    assert kg(env, "--workspace", "team-b", "ingest", str(later)).returncode == 0  # team-b: w2, w3, w4
    b_before, default_before = _units(env, "team-b"), _units(env, "default")
    assert b_before == ["w2", "w3", "w4"] and default_before == ["w4"]

    with serving({**env, "KG_WORKSPACE": "team-b"}):
        _served(backend, request, "team-b")
        for args in (["--workspace", "team-b", "restore", str(dump), "--replace", "--yes"],
                     ["--workspace", "team-b", "restore", str(dump), "--merge"],
                     ["restore", "--all-workspaces", str(whole), "--replace", "--yes"],
                     ["workspaces", "rename", "team-b", "blue"],
                     ["workspaces", "delete", "team-b", "--yes"]):
            refused = kg(env, *args)
            assert refused.returncode == 1, (args, refused.returncode, refused.stdout, refused.stderr)
            assert "served by" in refused.stderr and "team-b" in refused.stderr, (args, refused.stderr)
        restored = kg(env, "--workspace", "team-a", "restore", str(dump))  # not that server's workspace
        assert restored.returncode == 0, restored.stderr
    assert _units(env, "team-b") == b_before and _units(env, "default") == default_before
    assert _units(env, "team-a") == ["w2", "w3"]
    assert json.loads(kg(env, "workspaces", "list", "--json").stdout) == ["default", "team-a", "team-b"]
    done = kg(env, "--workspace", "team-b", "restore", str(dump), "--replace", "--yes")
    assert done.returncode == 0, done.stderr
    assert _units(env, "team-b") == ["w2", "w3"]


@pytest.mark.parametrize("backend", ["embedded", "neo4j"])
def test_a_server_of_a_workspace_nobody_made_does_not_start_on_both_backends(tmp_path: Path, backend: str,
                                                                            request):
    """``kg --workspace team-x serve`` (and ``worker``, ``mcp``) of a workspace nobody made exits 2
    at once with the reads' message, and makes nothing: on Neo4j it used to serve team-x as an
    empty knowledge base (and the worker to wait on its empty queue). Made with ``kg workspaces
    create``, the same server starts and answers for it."""
    import subprocess

    from tests.processes import KG, kg, serving

    env = _env(backend, tmp_path, request)
    src = tmp_path / "b.units"
    src.write_text(B_UNITS, "utf-8")
    assert kg(env, "--workspace", "team-b", "ingest", str(src)).returncode == 0
    for args in (["serve", "--port", "0"], ["worker"], ["mcp"]):
        try:  # a bound: before, the server and the worker ran until stopped
            done = subprocess.run([*KG, "--workspace", "team-x", *args], env=env, capture_output=True, text=True,
                                  timeout=120, input="")
        except subprocess.TimeoutExpired:
            pytest.fail(f"kg --workspace team-x {args[0]} started instead of refusing")
        assert done.returncode == 2, (args, done.returncode, done.stderr)
        assert "no workspace 'team-x'" in done.stderr and "kg workspaces list" in done.stderr, (args, done.stderr)
    assert json.loads(kg(env, "workspaces", "list", "--json").stdout) == ["default", "team-b"]
    assert kg(env, "workspaces", "create", "team-x").returncode == 0
    made = kg(env, "--workspace", "team-x", "keys", "create", "--user", "xena", "--role", "reader")
    assert made.returncode == 0, made.stderr
    with serving({**env, "KG_WORKSPACE": "team-x"}) as (base, _, _):
        got = httpx.get(f"{base}/v1/stats", headers={"Authorization": f"Bearer {made.stdout.strip()}"}, timeout=60)
        assert got.status_code == 200 and got.json()["units"] == 0, got.text


@pytest.mark.parametrize("backend", ["embedded", "neo4j"])
def test_the_library_refuses_a_read_of_a_workspace_nobody_made_as_the_cli_does(tmp_path: Path, backend: str,
                                                                              request):
    """``KnowledgeBase`` on a workspace nobody made raises the CLI reads' error (InputError, the
    same message as ``kg --workspace team-x stats``'s exit 2) from every read, and creates
    nothing; an ingest, as ``kg --workspace team-x ingest``, makes it, and reads then answer.
    Before, the reads answered empty, and on the embedded store made the workspace."""
    from kgservice.config import Settings
    from kgservice.errors import InputError
    from kgservice.service import KnowledgeBase
    from tests.processes import kg

    env = _env(backend, tmp_path, request)
    src = tmp_path / "b.units"
    src.write_text(B_UNITS, "utf-8")
    assert kg(env, "--workspace", "team-b", "ingest", str(src)).returncode == 0
    cli = kg(env, "--workspace", "team-x", "stats")
    assert cli.returncode == 2
    over = ({} if backend == "embedded" else
            {"backend": "neo4j", "neo4j_uri": env["KG_NEO4J_URI"], "neo4j_password": env["NEO4J_PASSWORD"],
             "vector_backend": "neo4j"})
    settings = Settings(data_dir=Path(env["KG_DATA_DIR"]), embedder=env["KG_EMBEDDER"], workspace="team-x", **over)
    reads = {"stats": lambda kb: kb.stats(), "ask": lambda kb: kb.ask("What does smoking cause?"),
             "search": lambda kb: kb.search("smoking"), "expand": lambda kb: kb.expand("smoking"),
             "unit": lambda kb: kb.unit("w2"), "documents": lambda kb: kb.documents(),
             "history": lambda kb: kb.history(), "jobs": lambda kb: kb.jobs.list(),
             "dump": lambda kb: kb.dump(tmp_path / "x.dump")}
    for name, read in reads.items():
        with KnowledgeBase(settings) as kb, pytest.raises(InputError) as refused:
            read(kb)
        assert str(refused.value) in cli.stderr, (name, str(refused.value), cli.stderr)
        assert "no workspace 'team-x'" in str(refused.value), name
    assert json.loads(kg(env, "workspaces", "list", "--json").stdout) == ["default", "team-b"]  # nothing made
    with KnowledgeBase(settings) as kb:
        assert kb.ingest_notation("#x1 {tea} [contains] {caffeine}\n").units_added == 1
    with KnowledgeBase(settings) as kb:
        assert kb.stats()["units"] == 1 and kb.unit("w2") is None
    assert json.loads(kg(env, "workspaces", "list", "--json").stdout) == ["default", "team-b", "team-x"]


@pytest.mark.parametrize("backend", ["embedded", "neo4j"])
def test_the_librarys_migrate_of_a_workspace_nobody_made_refuses_and_makes_nothing(tmp_path: Path, backend: str,
                                                                                 request):
    """``KnowledgeBase.migrate`` opens its store itself (without applying the schema steps, so its
    report lists them), past the refusal every other read meets. On a workspace nobody made it
    must refuse as ``kg --workspace team-x migrate`` does (exit 2, the same message), and make
    nothing: before, the library made the workspace (embedded: its graph and schema record)."""
    from dataclasses import replace

    from kgservice.config import Settings
    from kgservice.errors import InputError
    from kgservice.service import KnowledgeBase
    from tests.processes import kg

    env = _env(backend, tmp_path, request)
    src = tmp_path / "b.units"
    src.write_text(B_UNITS, "utf-8")
    assert kg(env, "--workspace", "team-b", "ingest", str(src)).returncode == 0
    cli = kg(env, "--workspace", "team-x", "migrate")
    assert cli.returncode == 2 and "no workspace 'team-x'" in cli.stderr, cli.stderr
    over = ({} if backend == "embedded" else
            {"backend": "neo4j", "neo4j_uri": env["KG_NEO4J_URI"], "neo4j_password": env["NEO4J_PASSWORD"],
             "vector_backend": "neo4j"})
    settings = Settings(data_dir=Path(env["KG_DATA_DIR"]), embedder=env["KG_EMBEDDER"], workspace="team-x", **over)
    for dry_run in (True, False):
        with KnowledgeBase(settings) as kb, pytest.raises(InputError) as refused:
            kb.migrate(dry_run=dry_run)
        assert str(refused.value) in cli.stderr, (dry_run, str(refused.value), cli.stderr)
    assert json.loads(kg(env, "workspaces", "list", "--json").stdout) == ["default", "team-b"]  # nothing made
    assert not (Path(env["KG_DATA_DIR"]) / "workspaces" / "team-x").exists()
    with KnowledgeBase(replace(settings, workspace="team-b")) as kb:  # one that exists migrates
        assert kb.migrate(dry_run=True) is not None
