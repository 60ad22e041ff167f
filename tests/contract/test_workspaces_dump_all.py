"""``kg dump --all-workspaces`` / ``kg restore --all-workspaces`` (docs/workspaces.md), on both
backends, through the real CLI: three workspaces with distinct markers dumped whole and restored
into a fresh deployment (a new data directory; on Neo4j a wiped database) each get exactly their
own units back; a damaged member stores nothing in any workspace; an occupied workspace is
refused (exit 2) without --replace. Keys are the deployment's and stay out of the folder."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.neo4j_helpers import wipe_all
from tests.processes import env_for, kg, neo4j_env

# workspace -> (its document, the unit ids it holds); each marker is stored in one workspace only
DOCS = {
    "default": ("#d1 {tea} [contains] {zqdefaultmark}\n", ["d1"]),
    "team-a": ("#a1 {tea} [contains] {zqalphamark}\n#a2 {zqalphamark} [part of] {leaf}\n", ["a1", "a2"]),
    "team-b": ("#b1 {coffee} [contains] {zqbetamark}\n#b2 {zqbetamark} [causes] {alertness}\n"
               "#b3 {coffee} [grows in] {brazil}\n", ["b1", "b2", "b3"]),
}
MARKS = {"default": "zqdefaultmark", "team-a": "zqalphamark", "team-b": "zqbetamark"}


def _env(backend: str, data_dir: Path, request: Any) -> dict[str, str]:
    if backend == "embedded":
        return env_for(data_dir)
    if not os.environ.get("KG_TEST_NEO4J_URI") and os.environ.get("CI") != "true":
        pytest.skip("no Neo4j: set KG_TEST_NEO4J_URI (and NEO4J_PASSWORD) after `scripts/neo4j start`")
    return neo4j_env(data_dir)


def _fresh(backend: str, request: Any) -> None:
    if backend == "neo4j":
        wipe_all(request.getfixturevalue("neo4j_connection"))


def _ingest_each(env: dict[str, str], tmp_path: Path) -> None:
    for ws, (text, _) in DOCS.items():
        src = tmp_path / f"{ws}.units"
        src.write_text(text, "utf-8")
        _ok(kg(env, "--workspace", ws, "ingest", str(src)))


def _ok(done: Any) -> Any:
    assert done.returncode == 0, done.stderr
    return done


def _body(path: Path) -> list[str]:
    """A per-workspace dump's records, without the header and end record (they hold the time of
    the dump and the checksum over it)."""
    raw = path.read_bytes()
    lines = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8").splitlines()
    return lines[1:-1]


def _unit_ids(lines: list[str]) -> list[str]:
    return sorted(json.loads(line)["unit"]["id"] for line in lines if line.startswith('{"unit"'))


@pytest.mark.parametrize("backend", ["embedded", "neo4j"])
def test_dump_all_and_restore_all(backend: str, tmp_path: Path, request: Any):
    _fresh(backend, request)
    env = _env(backend, tmp_path / "kg", request)
    _ingest_each(env, tmp_path)
    secret = _ok(kg(env, "keys", "create", "--user", "ann", "--role", "admin")).stdout.strip()
    assert secret.startswith("kg_")
    before = {}
    for ws in DOCS:  # each workspace's own dump, made the per-workspace way
        _ok(kg(env, "--workspace", ws, "dump", str(tmp_path / f"before-{ws}.jsonl")))
        before[ws] = _body(tmp_path / f"before-{ws}.jsonl")
        assert _unit_ids(before[ws]) == DOCS[ws][1]

    done = _ok(kg(env, "dump", "--all-workspaces", str(tmp_path / "all")))
    assert secret not in done.stdout + done.stderr
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == [
        "default.jsonl.gz", "manifest.json", "team-a.jsonl.gz", "team-b.jsonl.gz"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".all")] == []  # no temp folder left
    manifest = json.loads((tmp_path / "all" / "manifest.json").read_text("utf-8"))
    for m in manifest["workspaces"]:
        member = (tmp_path / "all" / m["file"]).read_bytes()
        assert hashlib.sha256(member).hexdigest() == m["sha256"]
        text = gzip.decompress(member).decode("utf-8")
        assert secret not in text and secret.split("_")[1] not in text  # keys are the deployment's
    again = kg(env, "dump", "--all-workspaces", str(tmp_path / "all"))
    assert again.returncode == 2 and "already exists" in again.stderr

    # into a fresh deployment: every workspace gets exactly its own records back
    _fresh(backend, request)
    env2 = _env(backend, tmp_path / "kg2", request)
    done = _ok(kg(env2, "restore", "--all-workspaces", str(tmp_path / "all")))
    assert sorted(json.loads(_ok(kg(env2, "workspaces", "list", "--json")).stdout)) == sorted(DOCS)
    for ws in DOCS:
        _ok(kg(env2, "--workspace", ws, "dump", str(tmp_path / f"after-{ws}.jsonl")))
        after = _body(tmp_path / f"after-{ws}.jsonl")
        assert after == before[ws], ws
        text = "\n".join(after)
        assert [m for w, m in MARKS.items() if m in text] == [MARKS[ws]]
    keys = _ok(kg(env2, "keys", "list", "--json"))
    assert "ann" not in keys.stdout  # the keys did not travel

    # an occupied workspace is refused without --replace, and nothing changes
    (tmp_path / "extra.units").write_text("#x1 {zqextramark} [part of] {leaf}\n", "utf-8")
    _ok(kg(env2, "--workspace", "team-a", "ingest", str(tmp_path / "extra.units")))
    refused = kg(env2, "restore", "--all-workspaces", str(tmp_path / "all"))
    assert refused.returncode == 2 and "team-a" in refused.stderr, refused.stderr
    _ok(kg(env2, "--workspace", "team-a", "dump", str(tmp_path / "held.jsonl")))
    assert _unit_ids(_body(tmp_path / "held.jsonl")) == ["a1", "a2", "x1"]
    assert kg(env2, "restore", "--all-workspaces", str(tmp_path / "all"), "--merge").returncode == 2
    _ok(kg(env2, "restore", "--all-workspaces", str(tmp_path / "all"), "--replace", "--yes"))
    _ok(kg(env2, "--workspace", "team-a", "dump", str(tmp_path / "replaced.jsonl")))
    assert _body(tmp_path / "replaced.jsonl") == before["team-a"]


@pytest.mark.parametrize("backend", ["embedded", "neo4j"])
@pytest.mark.parametrize("damage", ["manifest-sha", "member-checksum"])
def test_a_damaged_member_stores_nothing_anywhere(backend: str, damage: str, tmp_path: Path, request: Any):
    """The last member is damaged: with its sha256 left as the manifest says (the manifest
    catches it), or with the manifest's sha256 made to match (the member's own checksum catches
    it). Either way no workspace of the fresh target gets anything, the first ones included."""
    _fresh(backend, request)
    env = _env(backend, tmp_path / "kg", request)
    _ingest_each(env, tmp_path)
    _ok(kg(env, "dump", "--all-workspaces", str(tmp_path / "all")))
    member = tmp_path / "all" / "team-b.jsonl.gz"
    lines = gzip.decompress(member.read_bytes()).decode("utf-8").splitlines(keepends=True)
    assert lines[1].startswith('{"unit"') and '"subject":"' in lines[1]
    lines[1] = lines[1].replace('"subject":"', '"subject":"x', 1)  # an edited unit, still valid JSON
    member.write_bytes(gzip.compress("".join(lines).encode("utf-8")))
    if damage == "member-checksum":
        manifest_path = tmp_path / "all" / "manifest.json"
        manifest = json.loads(manifest_path.read_text("utf-8"))
        for m in manifest["workspaces"]:
            if m["name"] == "team-b":
                m["sha256"] = hashlib.sha256(member.read_bytes()).hexdigest()
        manifest_path.write_text(json.dumps(manifest), "utf-8")

    _fresh(backend, request)
    env2 = _env(backend, tmp_path / "kg2", request)
    refused = kg(env2, "restore", "--all-workspaces", str(tmp_path / "all"))
    assert refused.returncode == 2, refused.stderr
    assert "team-b.jsonl.gz" in refused.stderr and "nothing restored" in refused.stderr
    if backend == "embedded":
        assert not (tmp_path / "kg2").exists()  # not even a workspace directory was made
    else:
        import neo4j

        auth = ("neo4j", os.environ.get("NEO4J_PASSWORD", ""))
        with neo4j.GraphDatabase.driver(os.environ["KG_TEST_NEO4J_URI"], auth=auth) as d:
            rows = d.execute_query("MATCH (u:Unit) RETURN count(u) AS n").records
        assert rows[0]["n"] == 0
