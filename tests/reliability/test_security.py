"""Security of the shared setup: Neo4j auth is required (compose, scripts/neo4j), there is no
default password anywhere a network is reached, credentials come only from the environment
or an owner-only config file and are never printed or logged, and a read-only mode keeps
``ask`` / ``query`` users from writing."""

from __future__ import annotations

import ast
import logging
import os
import re
import stat
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.config import ConfigError, Settings, load_settings
from kgservice.notation import parse_units
from kgservice.stores.base import ReadOnlyError, StoreError
from tests.contract.corpus import SMALL
from tests.reliability.conftest import ROOT, SCRIPT

# -- auth required -------------------------------------------------------------------------------

def test_compose_requires_a_password_and_binds_loopback():
    text = (ROOT / "compose/docker-compose.yml").read_text("utf-8")
    (auth,) = re.findall(r"NEO4J_AUTH:\s*(\S.*)", text)
    assert auth.startswith("neo4j/${NEO4J_PASSWORD:?"), auth  # compose refuses to start without one
    assert "NEO4J_AUTH: none" not in text and "neo4j/neo4j" not in text
    ports = re.findall(r'^\s*-\s*"([^"]+:\d+)"', text, re.M)
    assert ports and all(p.startswith("127.0.0.1:") for p in ports), ports
    env_example = (ROOT / "compose/.env.example").read_text("utf-8")
    assert re.search(r"^NEO4J_PASSWORD=\s*$", env_example, re.M)  # shipped empty
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
    assert "compose/.env" not in tracked


@pytest.mark.parametrize("password,message", [(None, "no default password"), ("short", "shorter than 8")])
def test_local_script_refuses_to_start_without_a_real_password(password, message, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NEO4J_PASSWORD"}
    if password is not None:
        env["NEO4J_PASSWORD"] = password
    r = subprocess.run([sys.executable, str(SCRIPT), "start", "--data-dir", str(tmp_path / "d"), "--bolt-port", "1",
                        "--http-port", "2"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and message in r.stderr
    assert not (tmp_path / "d" / "neo4j.pid").exists()


@pytest.mark.neo4j
def test_running_server_has_auth_on_and_the_password_nowhere(neo4j_proc):
    conf = (neo4j_proc.data_dir / "conf/neo4j.conf").read_text()
    assert "dbms.security.auth_enabled=true" in conf
    assert re.search(r"server\.bolt\.listen_address=127\.0\.0\.1:", conf)
    pid = neo4j_proc.pid()
    secret = neo4j_proc.password.encode()
    assert secret not in open(f"/proc/{pid}/cmdline", "rb").read()  # not on the command line (ps)
    assert secret not in open(f"/proc/{pid}/environ", "rb").read()  # nor in the JVM's environment
    for f in neo4j_proc.data_dir.rglob("*"):
        if f.is_file() and f.suffix in (".conf", ".log", ".txt", ".pid", "") and f.stat().st_size < 50_000_000:
            assert secret not in f.read_bytes(), f
    # and the server does refuse a wrong password / no password
    from kgservice.stores.neo4j import Neo4jStore

    with pytest.raises(StoreError, match="refused the credentials") as ei:
        Neo4jStore.connect(neo4j_proc.uri, password="wrong-password-123")
    assert "wrong-password-123" not in str(ei.value)
    with pytest.raises(ConfigError, match="needs a password"):
        Neo4jStore.connect(neo4j_proc.uri, password=None)


# -- no default password in code or docs that reach a network -------------------------------------

DEFAULTS = re.compile(r"""(neo4j/neo4j\b|password\s*[=:]\s*["'](neo4j|password|secret|changeme|test1234|admin)["']|"""
                      r"""auth\s*=\s*\(\s*["']neo4j["']\s*,\s*["'][^"']+["']\s*\))""", re.I)


def _tracked_text_files() -> list:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True).stdout
    files = []
    for rel in out.splitlines():
        if rel.startswith("tests/") or not rel.endswith((".py", ".md", ".yml", ".yaml", ".toml", ".example", ".sh", ".cypher", "")):
            continue
        p = ROOT / rel
        if p.is_file() and p.stat().st_size < 2_000_000:
            files.append(p)
    return files


def test_no_default_password_in_code_scripts_compose_or_docs():
    hits = []
    for p in _tracked_text_files():
        try:
            text = p.read_text("utf-8")
        except UnicodeDecodeError:
            continue
        hits += [f"{p.relative_to(ROOT)}: {m.group(0)}" for m in DEFAULTS.finditer(text)]
    assert not hits, hits


def test_secret_env_lookups_have_no_default():
    offenders = []
    for p in list((ROOT / "kgservice").rglob("*.py")) + [SCRIPT]:
        for node in ast.walk(ast.parse(p.read_text("utf-8"))):
            if not (isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant)):
                continue
            name = str(node.args[0].value)
            func = ast.unparse(node.func)
            if func.endswith(("environ.get", "getenv")) and re.search(r"PASSWORD|API_KEY|SECRET|TOKEN", name):
                default = node.args[1]
                if not (isinstance(default, ast.Constant) and default.value in (None, "")):
                    offenders.append(f"{p.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not offenders, offenders
    assert Settings().neo4j_password is None and Settings().qdrant_api_key is None


# -- credentials: env or an owner-only file; never printed or logged --------------------------------

def test_config_file_with_a_secret_must_be_owner_only(tmp_path):
    cfg = tmp_path / "kg.toml"
    cfg.write_text('backend = "neo4j"\nneo4j_uri = "bolt://127.0.0.1:1"\nneo4j_password = "file-secret-123"\n')
    cfg.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600") as ei:
        load_settings(cfg, env={})
    assert "file-secret-123" not in str(ei.value)
    cfg.chmod(0o600)
    s = load_settings(cfg, env={})
    assert s.neo4j_password == "file-secret-123"
    assert "file-secret-123" not in repr(s) and "file-secret-123" not in str(s.public())
    r = CliRunner().invoke(app, ["--config", str(cfg), "stats"], env={})
    assert "file-secret-123" not in r.output
    cfg.chmod(0o640)
    r = CliRunner().invoke(app, ["--config", str(cfg), "stats"], env={})
    assert r.exit_code == 2 and "chmod 600" in r.stderr and "file-secret-123" not in r.output
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o640  # reported, never "fixed" silently


def test_init_writes_no_secret(tmp_path):
    r = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "init"], env={"NEO4J_PASSWORD": "env-secret-9876"})
    assert r.exit_code == 0
    assert "env-secret-9876" not in (tmp_path / "kg" / "kg.toml").read_text()


@pytest.mark.neo4j
def test_credentials_never_printed_or_logged(neo4j_proc, tmp_path, caplog):
    secret = neo4j_proc.password
    neo4j_proc.connect().wipe()
    env = {"KG_BACKEND": "neo4j", "KG_NEO4J_URI": neo4j_proc.uri, "NEO4J_PASSWORD": secret}
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    f = tmp_path / "s.units"
    f.write_text(SMALL, "utf-8")
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("neo4j").setLevel(logging.DEBUG)
        outputs = [runner.invoke(app, [*base, *cmd], env=env) for cmd in
                   (["stats"], ["ingest", str(f)], ["doctor"], ["dump", str(tmp_path / "d.jsonl")])]
        bad = runner.invoke(app, [*base, "stats"], env={**env, "NEO4J_PASSWORD": secret + "-wrong"})
    assert [o.exit_code for o in outputs] == [0, 0, 0, 0], [o.output for o in outputs]
    # a wrong password is the user's input (exit 2), as a missing one is
    assert bad.exit_code == 2 and "refused the credentials" in bad.stderr and "NEO4J_PASSWORD" in bad.stderr
    for o in outputs + [bad]:
        assert secret not in o.output
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HELLO" in logged or "hello" in logged.lower()  # the driver's debug log did run
    assert secret not in logged
    assert secret not in (tmp_path / "d.jsonl").read_text()
    for p in (tmp_path / "kg").rglob("*"):
        if p.is_file():
            assert secret.encode() not in p.read_bytes(), p


# -- read-only mode -------------------------------------------------------------------------------

@pytest.mark.neo4j
def test_read_only_neo4j_refuses_writes(neo4j_proc, make_kb, lexicon):
    import neo4j

    writer = make_kb("neo4j")
    writer.store.ingest(parse_units(SMALL, lexicon))
    ro = make_kb("neo4j", name="ro", read_only=True)
    store = ro.store
    assert store.read_only
    # reads work
    assert store.counts()["units"] == 18 and store.subject_mentions("smoking") == ["s1"]
    # kgservice refuses before anything is sent...
    with pytest.raises(ReadOnlyError):
        store.ingest(parse_units("#w1 {x} [has] {y}\n", lexicon))
    with pytest.raises(ReadOnlyError):
        ro.ingest_units(parse_units("#w1 {x} [has] {y}\n", lexicon))
    with pytest.raises(ReadOnlyError), store._session(write=True):
        pass
    # ...and the server itself refuses a write inside the sessions a read-only store opens
    with store._session(write=False) as s, pytest.raises(neo4j.exceptions.ClientError, match="read access mode") as ei:
        s.run("CREATE (:Node {id: 'sneaky'})").consume()
    assert ei.value.code == "Neo.ClientError.Statement.AccessMode"
    with pytest.raises(neo4j.exceptions.ClientError, match="read access mode"):
        store.driver.execute_query("CREATE (:Node {id: 'sneaky'})", routing_="r", database_=store.database)
    assert writer.store.counts()["units"] == 18 and not writer.store.get_nodes(["sneaky"])


def test_read_only_cli(tmp_path):
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    f = tmp_path / "s.units"
    f.write_text(SMALL, "utf-8")
    assert runner.invoke(app, [*base, "ingest", str(f)]).exit_code == 0
    ro = {"KG_READ_ONLY": "1"}
    r = runner.invoke(app, [*base, "ingest", str(f)], env=ro)
    assert r.exit_code == 1 and "read-only" in r.stderr
    assert runner.invoke(app, [*base, "stats"], env=ro).exit_code == 0
    assert runner.invoke(app, [*base, "expand", "cat"], env=ro).exit_code == 0
    assert runner.invoke(app, [*base, "doctor"], env=ro).exit_code == 0
    r = runner.invoke(app, [*base, "doctor", "--repair"], env=ro)
    assert r.exit_code == 1 and "read-only" in r.stderr
