"""The Ask page of a server without a configured model, in a real Chromium: it says what still
works, and an answer is the graph's best units, marked as such, each cited and opening its source."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import sign_in


def test_no_model_answer_is_marked_retrieval_only_with_citations(no_model_server, page):
    base = no_model_server["base"]
    sign_in(page, base, no_model_server["key"])
    note = page.locator("#no-model-note")
    expect(note).to_contain_text("No model is configured")
    expect(note).to_contain_text("Explore")
    expect(page.locator("#offline-note")).to_have_count(0)

    page.get_by_label("Question").fill("What does smoking cause?")
    page.get_by_role("button", name="Ask").click()
    expect(page.locator("#answer .no-model")).to_contain_text("not a written answer", timeout=90_000)
    expect(page.locator("#answer .not-in-graph")).to_have_count(0)
    expect(page.get_by_role("heading", name="Rounds")).to_be_hidden()  # no drill-down rounds: no empty heading
    citations = page.locator("button.citation")
    expect(citations.first).to_be_visible()
    assert any("smoking" in t for t in citations.all_text_contents())
    expect(page.locator("#answer button.cite-ref").first).to_have_text("[1]")
    expect(page.locator("#answer .answer-text")).to_contain_text("Smoking causes")
    citations.filter(has_text="smoking").first.click()
    expect(page.locator('#unit dd[data-field="notation"]')).to_contain_text("smoking")
    expect(page.locator('#unit dd[data-field="doc"]')).to_have_text("health.units")
    expect(page.locator("#unit-source mark.cited").first).to_contain_text("smoking")
    assert not page.kg_errors
