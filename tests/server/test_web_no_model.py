"""Without a configured model the Ask page says what still works, and an answer is marked as the
graph's best units (in process, no browser)."""

from __future__ import annotations

from kgservice.config import DEFAULT_LLM_MODEL
from kgservice.notation import parse_units
from kgservice.server import ServeOptions, create_app
from kgservice.service import KnowledgeBase
from tests.server.conftest import CORPUS, make_settings
from tests.server.test_web_gate import csrf_of, signed_in


def test_no_model_the_ask_page_says_what_still_works(tmp_path):
    settings = make_settings(tmp_path, llm_model=DEFAULT_LLM_MODEL, llm_model_chosen=False)
    nobody = KnowledgeBase(settings)
    try:
        nobody.ingest_units(parse_units(CORPUS, nobody.lexicon, doc="corpus.units"))
        app = create_app(settings, ServeOptions(kb=nobody))
        with signed_in(app) as c:
            html = c.get("/ui/ask").text
            assert 'id="no-model-note"' in html and 'id="offline-note"' not in html
            assert "Explore" in html.split('id="no-model-note"', 1)[1].split("</p>", 1)[0]
            out = c.post("/ui/v1/ask", json={"question": "What does smoking cause?"},
                         headers={"X-CSRF-Token": csrf_of(html)}).json()
            assert out["stop_reason"].startswith("no model configured") and out["found"]
    finally:
        nobody.close()


def test_a_chosen_offline_model_gets_the_offline_note(tmp_path, kb):
    app = create_app(make_settings(tmp_path), ServeOptions(kb=kb))  # kgoffline/rules, chosen
    with signed_in(app) as c:
        html = c.get("/ui/ask").text
    assert 'id="offline-note"' in html and 'id="no-model-note"' not in html
