"""The streamed answer on the page, in Chromium, with the keyboard only: the app under uvicorn on
a loopback port in this process (so a test can play the model: the offline provider streaming
slowly, or a model whose draft the grounded check refuses). What the page showed is read from a
MutationObserver's log of the answer box, in the order the page changed, never from timing."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from kgservice.llm import offline
from tests.processes import serving_app
from tests.server.test_ask_stream import hold_model
from tests.web.conftest import shoot
from tests.web.test_access import tab_to

CORPUS = """\
#s1 {smoking} [causes] {lung cancer}
    ()[confidence] (high)
#s3 {lung cancer} [leads to] {death}
#p1 {Python} [created by] {Guido van Rossum}
#p2 {Python} [is a] {programming language}
"""
# every change to #answer, in order: streamed text of a draft sentence, a draft citation, a piece
# of the draft's short answer, the checked short answer, the final answer's text, the "replaced" note ("draft" snapshots are the sentence's text then)
OBSERVE = """() => {
  window.kgLog = [];
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) {
      const host = n.nodeType === 3 ? n.parentElement : n;
      if (!host) continue;
      if (host.closest('.draft-text')) window.kgLog.push(['draft', n.textContent, host.closest('.draft-sentence').dataset.sentence]);
      else if (n.nodeType === 1 && n.matches('.draft-cite')) window.kgLog.push(['cite', n.getAttribute('data-unit')]);
      else if (host.closest('.draft-short')) window.kgLog.push(['draft_short', n.textContent]);
      else if (n.nodeType === 1 && n.matches('.short-answer')) window.kgLog.push(['short', n.textContent]);
      else if (n.nodeType === 1 && n.matches('.answer-text')) window.kgLog.push(['final', n.textContent]);
      else if (n.nodeType === 1 && n.matches('.stream-replaced')) window.kgLog.push(['replaced', n.textContent]);
    }
  }).observe(document.getElementById('answer'), { childList: true, subtree: true });
}"""


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    from kgservice.notation import parse_units
    from kgservice.server import ServeOptions, create_app
    from kgservice.service import KnowledgeBase
    from tests.server.conftest import make_settings

    settings = make_settings(tmp_path_factory.mktemp("stream"))
    kb = KnowledgeBase(settings)
    kb.ingest_units(parse_units(CORPUS, kb.lexicon, doc="corpus.units"))
    app = create_app(settings, ServeOptions(kb=kb))
    key = app.state.ctx.keys().create("stream-reader", "reader")[0]
    with serving_app(app) as base:
        yield {"base": base, "key": key, "kb": kb}
    kb.close()


@pytest.fixture
def slow_model(monkeypatch):
    """The offline model streams a piece every 50 ms (KG_OFFLINE_STREAM_DELAY)."""
    monkeypatch.setenv("KG_OFFLINE_STREAM_DELAY", "0.05")
    yield
    offline.SCRIPT.clear()


def keyboard_ask(page, live: dict, question: str) -> None:
    """Sign in and ask with the keyboard only; the observer is on before the question goes."""
    page.goto(live["base"] + "/")
    tab_to(page, "#key")
    page.keyboard.type(live["key"])
    page.keyboard.press("Enter")
    page.wait_for_url(live["base"] + "/ui/ask")
    page.evaluate(OBSERVE)
    tab_to(page, "#question")
    page.keyboard.type(question)
    page.keyboard.press("Enter")


def test_streamed_answer_shows_partial_text_first_and_opens_by_keyboard(live, page, slow_model):
    keyboard_ask(page, live, "Who created Python?")
    final = page.locator("#answer .answer-text")
    expect(final).to_contain_text("Python created by Guido van Rossum. [", timeout=120_000)
    log = page.evaluate("() => window.kgLog")
    kinds = [e[0] for e in log]
    assert "final" in kinds and "draft" in kinds, log
    first_final = kinds.index("final")
    drafts = [e[1] for e in log[:first_final] if e[0] == "draft" and e[2] == "0"]
    # the rules model's sentence is "Python created by Guido van Rossum." (its unit, restated): the
    # page showed strictly shorter beginnings of it before the checked answer replaced the draft
    sentence = "Python created by Guido van Rossum."
    assert drafts and all(sentence.startswith(d) for d in drafts), drafts
    assert any(len(d) < len(sentence) for d in drafts), drafts
    assert ["cite", "p1"] in log[:first_final]  # the citation was linked while streaming
    assert "replaced" not in kinds  # the draft passed the check: nothing to say
    expect(page.locator("#answer")).to_have_attribute("aria-busy", "false")
    # the checked answer's citation, by keyboard
    tab_to(page, "#answer button.cite-ref")
    page.keyboard.press("Enter")
    expect(page.locator('#unit dd[data-field="notation"]')).to_contain_text("Guido van Rossum")
    assert not page.kg_errors, page.kg_errors


def test_a_refused_draft_is_replaced_and_the_page_says_so(live, page, slow_model):
    """The model's every draft adds "diabetes", which no cited unit states: the page shows the
    draft as it streams, strikes it when the check refuses it, and ends with the checked answer
    ("not in the graph") saying that it replaced the draft."""
    offline.SCRIPT.override_task("answer", lambda payload: {"found": True, "sentences": [
        {"text": "Smoking causes lung cancer and diabetes.", "cites": ["s1"]}]})
    keyboard_ask(page, live, "What does smoking cause?")
    note = page.locator("#answer .stream-replaced")
    expect(note).to_contain_text("did not pass the grounding check", timeout=120_000)
    expect(note).to_contain_text("diabetes")
    expect(page.locator("#answer .not-in-graph")).to_be_visible()
    expect(page.locator("#answer .answer-draft")).to_have_count(0)  # the ungrounded text is gone
    expect(page.locator("#answer")).not_to_contain_text("Smoking causes lung cancer and diabetes")
    log = page.evaluate("() => window.kgLog")
    kinds = [e[0] for e in log]
    assert "draft" in kinds and kinds.index("draft") < kinds.index("replaced"), log
    assert any("diabetes" in e[1] for e in log if e[0] == "draft")  # it was shown while streaming
    assert not page.kg_errors, page.kg_errors
    shoot(page, "ask-stream-replaced")


def test_the_short_answer_shows_above_the_answer_streamed_and_from_the_cache(live, page, slow_model):
    """The rules model's short answer is the first cited unit's arguments: "Guido van Rossum" for
    #p1 {Python} [created by] {Guido van Rossum}. Streamed, it shows in pieces before the
    draft's sentence (it comes first in the reply) and before the checked answer; the checked
    short answer stands above the sentences. Asked again, the answer comes from the cache (no
    draft): the short answer is there the same."""
    live["kb"].clear_caches()  # an earlier test may have asked it: this first ask is uncached
    keyboard_ask(page, live, "Who created Python?")
    expect(page.locator("#answer .answer-text")).to_be_visible(timeout=120_000)
    log = page.evaluate("() => window.kgLog")
    kinds = [e[0] for e in log]
    assert "draft_short" in kinds and "final" in kinds, log
    pieces = [e[1] for e in log if e[0] == "draft_short"]
    assert "".join(pieces) == "Guido van Rossum" and len(pieces) > 1, pieces  # it came in pieces
    assert kinds.index("draft_short") < kinds.index("draft") < kinds.index("final")
    for answer in range(2):
        short = page.locator("#answer .short-answer")
        expect(short).to_have_count(1)
        expect(short).to_have_text("Answer: Guido van Rossum")
        expect(short.locator("strong")).to_have_text("Guido van Rossum")
        above = page.evaluate("""() => {
          const s = document.querySelector('#answer .short-answer'), t = document.querySelector('#answer .answer-text');
          return !!(s.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING) &&
                 s.getBoundingClientRect().bottom <= t.getBoundingClientRect().top &&
                 parseFloat(getComputedStyle(s).fontSize) > parseFloat(getComputedStyle(t).fontSize); }""")
        assert above, "the short answer stands above the sentences, in a larger type"
        if answer == 0:  # the same question again: the decision cache answers, nothing streams
            page.evaluate(OBSERVE)
            tab_to(page, "#question")
            page.keyboard.press("Enter")
            expect(page.locator("#answer")).to_have_attribute("aria-busy", "false")
            expect(page.locator("#answer .answer-text")).to_be_visible(timeout=120_000)
            log = page.evaluate("() => window.kgLog")
            assert "draft_short" not in [e[0] for e in log] and ["short", "Answer: Guido van Rossum"] in log, log
    assert not page.kg_errors, page.kg_errors
    shoot(page, "ask-short-answer")


def test_the_short_answer_shows_while_the_model_has_written_one_token(live, page, monkeypatch):
    """The rules model answers "Who created Python?" with "Guido van Rossum" on its reply's first
    line; held after its first token ('Guid', cl100k) until the page shows it, the page had the
    answer's first words while the model had written one token (without them it would wait its
    60 s, then go on: ``waited`` says which)."""
    go, waited = hold_model(monkeypatch, 1)
    live["kb"].clear_caches()  # uncached: the answer goes to the model
    keyboard_ask(page, live, "Who created Python?")
    try:
        expect(page.locator("#answer .draft-short strong")).to_have_text("Guid", timeout=60_000)
        expect(page.locator("#answer .answer-text")).to_have_count(0)  # nothing checked yet
    finally:
        go.set()
    expect(page.locator("#answer .short-answer")).to_have_text("Answer: Guido van Rossum", timeout=120_000)
    assert waited == [True], "the model was never released by the page"
    log = page.evaluate("() => window.kgLog")
    assert [e[1] for e in log if e[0] == "draft_short"][0] == "Guid", log
    assert not page.kg_errors, page.kg_errors
