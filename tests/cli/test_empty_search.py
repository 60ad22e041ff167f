"""An empty search text is refused, as an empty question is: `kg search ""` listed the five
nodes nearest the embedding of nothing (cosine ~0.4) as if they matched; REST took "   "."""

from __future__ import annotations

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.server import ServeOptions, create_app
from kgservice.service import KnowledgeBase
from tests.server.conftest import BASE, auth, make_settings


def test_kg_search_with_no_words_is_exit_2(tmp_path):
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    f = tmp_path / "t.units"
    f.write_text("#t1 {tea} [contains] {caffeine}\n", "utf-8")
    assert runner.invoke(app, [*base, "ingest", str(f)]).exit_code == 0
    for text in ("", "   "):
        r = runner.invoke(app, [*base, "search", text])
        assert r.exit_code == 2 and "empty search text" in r.output, r.output
    ok = runner.invoke(app, [*base, "search", "tea"])
    assert ok.exit_code == 0 and "tea" in ok.output


def test_rest_search_of_blanks_is_422(tmp_path):
    settings = make_settings(tmp_path)
    kb = KnowledgeBase(settings)
    try:
        kb.ingest_notation("#t1 {tea} [contains] {caffeine}\n")
        api = create_app(settings, ServeOptions(kb=kb))
        key = api.state.ctx.keys().create("rita", "reader")[0]
        with TestClient(api, base_url=BASE) as c:
            r = c.post("/v1/search", json={"query": "   "}, headers=auth(key))
            assert r.status_code == 422 and "empty search text" in r.json()["detail"]
    finally:
        kb.close()
