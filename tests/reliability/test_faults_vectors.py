"""Vector store faults: the Qdrant path locked by another process (qdrant-client local mode
and qdrant-edge), a Qdrant server that is unreachable, and the embedder failing mid-ingest.
The graph batch lands whole (it is written first, atomically); the user gets one clear
message; ``kg doctor`` then finds the nodes without vectors and ``--repair`` embeds them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from kgservice.admin import doctor
from kgservice.cli.app import app
from kgservice.notation import parse_units
from kgservice.vectors import VectorStoreLocked, VectorStoreUnavailable, edge_available
from tests.contract.corpus import SMALL
from tests.reliability.conftest import free_port

HOLD = """
import sys
from kgservice.vectors import open_vector_store
vs = open_vector_store(dim=64, model_name=sys.argv[2], path=sys.argv[1], backend=sys.argv[3])
print("held", flush=True)
sys.stdin.read()
vs.close()
"""


def _hold(path, backend: str) -> subprocess.Popen:
    """Another process that opens the vector directory and keeps it until its stdin closes."""
    from kgservice.vectors.embedder import make_embedder

    model = make_embedder("hash:64").name
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), model, backend], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.mark.parametrize("vector_backend", ["qdrant", pytest.param("edge", marks=pytest.mark.skipif(
    not edge_available(), reason="qdrant-edge-py not installed"))])
def test_locked_vector_path_then_doctor_repairs(vector_backend, tmp_path):
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    env = {"KG_VECTOR_BACKEND": vector_backend, "KG_VECTOR_LOCK_WAIT": "0"}  # held for good: fail at once
    f = tmp_path / "small.units"
    f.write_text(SMALL, "utf-8")
    holder = _hold(tmp_path / "kg" / "qdrant", vector_backend)
    try:
        r = runner.invoke(app, [*base, "ingest", str(f)], env=env)
        assert r.exit_code == 1, r.output
        msg = " ".join(r.stderr.split())  # independent of any line wrapping
        assert "locked by another process" in msg and "kg doctor --repair" in msg
        assert "Traceback" not in r.output
        # the graph batch is whole
        assert json.loads(runner.invoke(app, [*base, "stats", "--json"], env=env).stdout)["units"] == 18
        # doctor cannot look at the vectors while they are locked: it says so, exit 1
        r = runner.invoke(app, [*base, "doctor"], env=env)
        assert r.exit_code == 1 and "locked" in r.stderr
        assert runner.invoke(app, [*base, "doctor", "--no-vectors"], env=env).exit_code == 0
    finally:
        holder.stdin.close()
        holder.wait(30)
    r = runner.invoke(app, [*base, "doctor", "--json"], env=env)
    assert r.exit_code == 1
    findings = {x["check"]: x for x in json.loads(r.stdout)["findings"]}
    assert set(findings) == {"nodes_without_vectors"} and findings["nodes_without_vectors"]["count"] == 24
    assert runner.invoke(app, [*base, "doctor", "--repair"], env=env).exit_code == 0
    assert runner.invoke(app, [*base, "doctor"], env=env).exit_code == 0
    hits = json.loads(runner.invoke(app, [*base, "search", "smoking", "--json"], env=env).stdout)
    assert hits[0]["node_id"] == "smoking"


def test_locked_in_process_is_a_clear_error(make_kb):
    kb = make_kb("embedded")
    assert kb.vectors is not None
    other = make_kb("embedded", name="kb", vector_lock_wait=0)  # the same data dir, no waiting
    with pytest.raises(VectorStoreLocked, match="locked by another process"):
        other.vectors


def test_unreachable_qdrant_server(make_kb, lexicon, tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    kb = make_kb("embedded", qdrant_url=url)
    with pytest.raises(VectorStoreUnavailable) as ei:
        kb.ingest_units(parse_units(SMALL, lexicon))
    # bounded retries: the message counts them ("did not answer after N attempt(s)"), nothing is timed
    assert url in str(ei.value) and "did not answer after" in str(ei.value) and "kg doctor --repair" in str(ei.value)
    assert kb.store.counts()["units"] == 18  # the graph part is stored whole
    with pytest.raises(VectorStoreUnavailable):
        doctor.check(kb)
    assert doctor.check(kb, vectors=False).ok
    cli = ["--data-dir", str(tmp_path / "cli"), "--embedder", "hash:64"]
    assert CliRunner().invoke(app, [*cli, "init"], env={"KG_QDRANT_URL": url}).exit_code == 0
    r = CliRunner().invoke(app, [*cli, "search", "x"], env={"KG_QDRANT_URL": url})
    assert r.exit_code == 1 and "did not answer" in r.stderr and "Traceback" not in r.output


def test_embedder_failing_mid_ingest(backend, make_kb, lexicon, monkeypatch):
    kb = make_kb(backend)
    real = kb.embedder.embed
    calls = []

    def flaky(texts):
        calls.append(len(texts))
        if len(calls) == 2:
            raise RuntimeError("embedding service went away (simulated)")
        return real(texts)

    monkeypatch.setattr(kb.embedder, "embed", flaky)
    many = parse_units("".join(f"#v{i} {{node {i}}} [has] {{value {i % 9}}}\n" for i in range(300)), lexicon)
    with pytest.raises(RuntimeError, match="went away"):
        kb.ingest_units(many)  # 309 new nodes -> two embedding batches of 256: the second fails
    assert kb.store.counts()["units"] == 300
    report = doctor.check(kb)
    (missing,) = report.of("nodes_without_vectors")
    assert missing.count == 309 - 256
    monkeypatch.setattr(kb.embedder, "embed", real)
    assert doctor.repair(kb, report).after.ok
