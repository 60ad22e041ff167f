"""`kg serve` checks the answering model once at start (in the background) and /readyz reports it: not configured
(answers are retrieval-only), ok, or unreachable. The offline providers answer the ping; a
task override plays a model that cannot be reached."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from kgservice.llm.check import check_model, configured_status
from kgservice.server import ServeOptions, create_app
from tests.server.conftest import BASE, make_settings


@pytest.fixture
def script():
    from kgservice.llm.client import ensure_litellm
    from kgservice.llm.offline import SCRIPT

    ensure_litellm()
    SCRIPT.clear()
    yield SCRIPT
    SCRIPT.clear()


def test_the_default_nobody_chose_is_not_configured_and_answers_from_retrieval(tmp_path):
    status = check_model(make_settings(tmp_path, llm_model="kgoffline/scripted", llm_model_chosen=False))
    assert (status.state, status.answers) == ("not configured", "retrieval-only")
    assert "KG_LLM_MODEL" in status.detail


@pytest.mark.parametrize("model", ["kgoffline/rules", "kgoffline/scripted"])
def test_a_configured_offline_model_answers_the_ping(tmp_path, script, model):
    status = check_model(make_settings(tmp_path, llm_model=model, llm_model_chosen=True))
    assert (status.state, status.model, status.answers) == ("ok", model, "model")


def test_a_model_that_cannot_be_reached_is_reported_with_the_cause(tmp_path, script):
    script.override_task("ping", lambda payload: {"error": "connection"})
    status = check_model(make_settings(tmp_path, llm_model="kgoffline/rules", llm_model_chosen=True))
    assert status.state == "unreachable" and "APIConnectionError" in status.detail
    assert "reads and unit ingest work" in status.detail
    unknown = check_model(make_settings(tmp_path, llm_model="kgoffline/nosuch", llm_model_chosen=True))
    assert unknown.state == "unreachable" and "unknown offline model" in unknown.detail


def _readyz(settings, kb=None, check: bool = True) -> dict:
    app = create_app(settings, ServeOptions(kb=kb, check_model=check))
    with TestClient(app, base_url=BASE) as c:
        deadline = time.monotonic() + 120  # the check runs in the background: a bound for a hang only
        while (r := c.get("/readyz")).json()["model"]["state"] == "checking":
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert r.status_code == 200, r.text  # the model is reported, never a reason to refuse reads
    return r.json()["model"]


def test_readyz_reports_what_the_start_found(tmp_path, script):
    ok = _readyz(make_settings(tmp_path / "a", llm_model="kgoffline/rules", llm_model_chosen=True))
    assert ok["state"] == "ok" and ok["model"] == "kgoffline/rules"
    script.override_task("ping", lambda payload: {"error": "timeout"})
    down = _readyz(make_settings(tmp_path / "b", llm_model="kgoffline/rules", llm_model_chosen=True))
    assert down["state"] == "unreachable" and "Timeout" in down["detail"]
    unset = _readyz(make_settings(tmp_path / "c", llm_model="kgoffline/scripted", llm_model_chosen=False))
    assert unset["state"] == "not configured" and unset["answers"] == "retrieval-only"
    unchecked = _readyz(make_settings(tmp_path / "d", llm_model="kgoffline/rules", llm_model_chosen=True), check=False)
    assert unchecked == configured_status(make_settings(tmp_path / "d", llm_model="kgoffline/rules",
                                                        llm_model_chosen=True)).to_dict()
    assert unchecked["state"] == "not checked"


def test_kg_serve_checks_the_model_at_start(tmp_path):
    from tests.processes import env_for, serving

    env = env_for(tmp_path / "kg", KG_LLM_MODEL="kgoffline/rules")
    with serving(env) as (base, _, log):
        deadline = time.monotonic() + 120  # the check runs in the background: a bound for a hang only
        while (model := httpx.get(base + "/readyz").json()["model"])["state"] == "checking":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        logged = Path(log.name)
    assert model["state"] == "ok" and model["model"] == "kgoffline/rules"
    assert "kg serve: model kgoffline/rules: ok" in logged.read_text()
