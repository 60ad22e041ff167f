"""Bad input is exit 2 with one line naming what was wrong, wherever it comes from (a flag, an
option, an environment variable); a reader closing the pipe early ends `kg` as it ends any Unix
tool; what `kg` prints about a change or a remote job says each thing once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app

GOOD = "#u1 {cat} [belongs to] {mammal}\n#u2 {mammal} [has] {fur}\n#u3 {猫} [同义] {cat}\n"
# none of the caller's own settings may leak in (a developer's KG_CONFIG, a test Neo4j's password)
CLEAN = {var: None for var in ("KG_CONFIG", "KG_BACKEND", "KG_NEO4J_URI", "NEO4J_PASSWORD", "KG_NEO4J_PASSWORD",
                               "KG_LEXICON", "KG_VECTOR_BACKEND", "KG_QDRANT_URL")}


@pytest.fixture
def kg(tmp_path):
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]

    def run(*args: str, code: int = 0, env: dict[str, str | None] | None = None):
        result = CliRunner().invoke(app, [*base, *args], env={**CLEAN, **(env or {})})
        assert result.exit_code == code, result.output
        return result

    return run


@pytest.fixture
def stored(kg, tmp_path) -> Path:
    f = tmp_path / "a.units"
    f.write_text(GOOD, "utf-8")
    kg("ingest", str(f))
    return f


def _line(result) -> str:
    return " ".join(result.stderr.split())


def test_backend_flag_is_checked_like_the_variable(kg, stored):
    flag = kg("--backend", "bogus", "expand", "cat", code=2)
    assert "--backend must be 'embedded' or 'neo4j', got 'bogus'" in _line(flag) and not flag.stdout
    var = kg("expand", "cat", code=2, env={"KG_BACKEND": "bogus"})
    assert "KG_BACKEND must be 'embedded' or 'neo4j', got 'bogus'" in _line(var)
    assert "backend 'neo4j' needs KG_NEO4J_URI" in _line(kg("--backend", "neo4j", "stats", code=2))
    kg("--backend", "embedded", "expand", "cat")


def test_neo4j_without_a_password_is_a_configuration_error(kg):
    r = kg("stats", code=2, env={"KG_NEO4J_URI": "bolt://127.0.0.1:9"})  # nothing listens there: never reached
    assert "NEO4J_PASSWORD" in _line(r) and "Traceback" not in r.output


def test_neo4j_connect_without_a_password_refuses_before_connecting():
    from kgservice.config import ConfigError
    from kgservice.stores.neo4j import Neo4jStore

    with pytest.raises(ConfigError, match="NEO4J_PASSWORD"):
        Neo4jStore.connect("bolt://127.0.0.1:9", password=None, attempts=1)


@pytest.mark.parametrize("args, needles", [
    (("ask", "what is a cat?", "--max-rounds", "-3"), ("--max-rounds", "1..10", "-3")),
    (("ask", "what is a cat?", "--max-units", "0"), ("--max-units", "1..500")),
    (("ask", "what is a cat?", "--top-k", "0"), ("--top-k", "at least 1")),
    (("search", "tobacco", "--top-k", "0"), ("--top-k", "at least 1")),
])
def test_out_of_range_options_are_refused(kg, stored, args, needles):
    line = _line(kg(*args, code=2))
    assert all(n in line for n in needles), line


def test_a_bad_mode_is_refused_before_anything_is_stored(kg, tmp_path):
    f = tmp_path / "a.units"
    f.write_text(GOOD, "utf-8")
    assert "--mode must be summary or detail, got 'bogus'" in _line(kg("ingest", str(f), "--mode", "bogus", code=2))
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.units").write_text(GOOD, "utf-8")
    assert "--mode must be summary or detail" in _line(kg("sync", str(folder), "--mode", "bogus", code=2))
    assert json.loads(kg("stats", "--json").stdout)["units"] == 0


@pytest.mark.parametrize("command", [("stats",), ("expand", "cat")])
def test_a_broken_lexicon_file_is_refused_by_every_command(kg, stored, tmp_path, command):
    missing = kg(*command, code=2, env={"KG_LEXICON": str(tmp_path / "nope.json")})
    assert "lexicon file not found" in _line(missing) and "KG_LEXICON" in _line(missing)
    bad = tmp_path / "bad.json"
    bad.write_text('{"kinds": {', "utf-8")
    malformed = kg(*command, code=2, env={"KG_LEXICON": str(bad)})
    assert f"{bad}:1:" in _line(malformed) and "KG_LEXICON" in _line(malformed)
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"kinds": {"synonym": {"members": ["idem"]}}}), "utf-8")
    kg(*command, env={"KG_LEXICON": str(ok)})


def test_a_json_file_is_not_sent_to_extraction(kg, tmp_path):
    f = tmp_path / "ok.json"
    f.write_text('[{"subject": "cat"}]', "utf-8")
    line = _line(kg("ingest", str(f), code=2))
    assert "kg restore" in line and ".units" in line and "--mode" not in line, line
    log = tmp_path / "notes.log"  # plain text under another name: --mode is the way in
    log.write_text("cats are mammals\n", "utf-8")
    assert "--mode summary|detail" in _line(kg("ingest", str(log), code=2))


def test_retract_and_undo_name_what_they_changed(kg, stored):
    retracted = kg("retract", "u1", "--reason", "wrong").stdout
    assert "(retract u1)" in retracted, retracted
    change = retracted.split()[1]
    undone = kg("undo", change).stdout
    assert f"(undo of {change})" in undone, undone
    assert " )" not in retracted + undone


def test_remote_summary_says_each_count_once(tmp_path):
    """The line `kg ingest --server` prints for a real document job's result (run in-process:
    the same run_job a worker runs)."""
    from kgservice.cli.remote import Submitted, summary_line
    from kgservice.config import Settings
    from kgservice.jobs.model import Job
    from kgservice.jobs.run import run_job
    from kgservice.service import KnowledgeBase

    now = datetime.now(timezone.utc)
    job = Job(id="j1", kind="ingest", status="running", user="wanda", created_at=now, updated_at=now,
              payload={"units": "#m1 {zebrafish} [has] {fins}\n", "document": "wanda/more.units"})
    with KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="edge")) as kb:
        result = run_job(kb, job)
    assert result["added"] == result["units_added"] == 1  # the result does carry both names
    line = summary_line(Submitted(Path("more.units"), "j1", {"status": "done", "result": result}))
    assert line.startswith("more.units: done (job j1): ") and "1 units added" in line, line
    assert "1 added" not in line.replace("1 units added", "") and line.count("unchanged") == 1, line


def _kg_into_closed_pipe(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """`kg ARGS` with stdout a pipe whose reader is gone before the process starts: every write
    fails (what `| head -1` does to a longer output, without its race)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-c", "from kgservice.cli.app import main; main()", *args],
                              stdout=write, stderr=subprocess.PIPE, env=env, text=True, timeout=120)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [("expand", "cat"), ("expand", "cat", "--json"), ("--help",)])
def test_closed_pipe_ends_quietly_with_status_141(stored, tmp_path, args):
    # buffered as for any user (the --json text then fails only at the last flush, on the way out)
    env = {k: v for k, v in os.environ.items() if k not in CLEAN and k != "PYTHONUNBUFFERED"}
    env.update(KG_DATA_DIR=str(tmp_path / "kg"), KG_EMBEDDER="hash:64")
    done = _kg_into_closed_pipe(env, *args)
    assert done.returncode == 141 and done.stderr == "", (done.returncode, done.stderr)
