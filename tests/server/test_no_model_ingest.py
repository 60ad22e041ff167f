"""Text ingest with no model configured (the default kgoffline/scripted, chosen by nobody) is
refused before anything is stored or queued, by one library check
(:func:`kgservice.llm.check.refuse_text_without_model`): `kg ingest` exits 2, REST answers 422
and MCP an error result, all in the same words; no job is created. A document that already
holds exactly the text submitted needs no model, so its resubmission is still accepted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from kgservice.config import DEFAULT_LLM_MODEL
from kgservice.llm.check import NoModelConfigured, refuse_text_without_model
from kgservice.notation import parse_units
from kgservice.server import ServeOptions, create_app
from kgservice.service import KnowledgeBase
from tests.processes import env_for, kg
from tests.server.conftest import BASE, CORPUS, auth, make_settings
from tests.server.test_mcp import call, make, run

TEA = "Tea contains caffeine."


def refusal(settings, subject: str) -> str:
    with pytest.raises(NoModelConfigured) as caught:
        refuse_text_without_model(settings, [subject])
    return str(caught.value)


@pytest.fixture
def unconfigured(tmp_path: Path) -> Iterator[tuple[KnowledgeBase, TestClient, dict[str, str]]]:
    settings = make_settings(tmp_path, llm_model=DEFAULT_LLM_MODEL)
    assert not settings.llm_model_chosen
    kb = KnowledgeBase(settings)
    kb.ingest_units(parse_units(CORPUS, kb.lexicon, doc="corpus.units"))
    app = create_app(settings, ServeOptions(kb=kb))
    key = app.state.ctx.keys().create("wanda", "writer")[0]
    try:
        with TestClient(app, base_url=BASE) as client:
            yield kb, client, auth(key)
    finally:
        kb.close()


def test_rest_and_mcp_refuse_text_up_front_in_the_clis_words(unconfigured, tmp_path: Path):
    kb, client, h = unconfigured
    r = client.post("/v1/ingest", json={"text": TEA}, headers=h)
    assert r.status_code == 422, r.text
    assert r.json() == {"detail": refusal(kb.settings, "the request's 'text'"), "status": 422,
                        "request_id": r.headers["x-request-id"]}
    assert "none is configured" in r.json()["detail"] and "KG_LLM_MODEL" in r.json()["detail"]
    r = client.post("/v1/ingest", json={"text": TEA, "mode": "detail", "doc": "notes.txt"}, headers=h)
    assert r.status_code == 422 and "the text of document 'wanda/notes.txt'" in r.json()["detail"]
    r = client.put("/v1/documents/notes/tea.md", json={"text": TEA}, headers=h)
    assert r.status_code == 422 and "the text of document 'notes/tea.md'" in r.json()["detail"]
    _, mcp = make(kb.settings, kb, "writer")
    m = run(call(mcp, "ingest_text", {"text": TEA}))
    assert m.is_error and "none is configured" in m.content[0].text
    assert kb.jobs.list() == []  # no job to fail later
    # unit notation needs no model
    assert client.post("/v1/ingest", json={"units": "#t1 {tea} [contains] {caffeine}\n"}, headers=h).status_code == 202

    # `kg ingest` says the same, exit 2, and stores nothing (not even the unit file given with the text)
    env = env_for(tmp_path / "cli-kg")
    del env["KG_LLM_MODEL"]
    (tmp_path / "tea.txt").write_text(TEA + "\n", "utf-8")
    (tmp_path / "a.units").write_text("#a1 {tea} [is a] {drink}\n", "utf-8")
    done = kg(env, "ingest", str(tmp_path / "a.units"), str(tmp_path / "tea.txt"))
    assert done.returncode == 2, done.stderr
    assert " ".join(refusal(kb.settings, str(tmp_path / "tea.txt")).split()) in " ".join(done.stderr.split())
    stats = kg(env, "stats", "--json")
    assert stats.returncode == 0 and '"units": 0' in stats.stdout, stats.stdout


def test_a_document_already_holding_the_text_needs_no_model(tmp_path: Path):
    """Its resubmission changes nothing and calls no model: accepted, as before."""
    with KnowledgeBase(make_settings(tmp_path)) as kb:  # kgoffline/rules extracts it
        kb.ingest_document("notes/tea.md", TEA + "\n")
    settings = make_settings(tmp_path, llm_model=DEFAULT_LLM_MODEL)
    kb = KnowledgeBase(settings)
    try:
        app = create_app(settings, ServeOptions(kb=kb))
        h = auth(app.state.ctx.keys().create("wanda", "writer")[0])
        with TestClient(app, base_url=BASE) as client:
            same = client.put("/v1/documents/notes/tea.md", json={"text": TEA + "\n"}, headers=h)
            assert same.status_code == 202, same.text
            changed = client.put("/v1/documents/notes/tea.md", json={"text": "Tea contains tannins.\n"}, headers=h)
            assert changed.status_code == 422 and "none is configured" in changed.json()["detail"]
    finally:
        kb.close()


def test_recordings_to_replay_are_not_refused(tmp_path: Path):
    """KG_LLM_RECORDINGS with the default provider may hold the text's replies: not refused up front."""
    refuse_text_without_model(make_settings(tmp_path, llm_model=DEFAULT_LLM_MODEL,
                                            llm_recordings=(tmp_path / "replies.jsonl",)), ["notes.md"])
    refusal(make_settings(tmp_path, llm_model=DEFAULT_LLM_MODEL), "notes.md")
    refuse_text_without_model(make_settings(tmp_path, llm_model="kgoffline/scripted", llm_model_chosen=True),
                              ["notes.md"])  # chosen explicitly: its own failures stay loud
