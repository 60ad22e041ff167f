"""What the page shows of the server's data is words, not JSON: the drill-down rounds while an
answer is worked out, and what a finished job did."""

from __future__ import annotations

import json
import re

import httpx
from playwright.sync_api import expect

from tests.web.conftest import signed_in, upload_on_jobs_page


def sse_rounds(body: str) -> list[dict]:
    rounds = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        lines = block.split("\n")
        if "event: round" in lines:
            rounds.append(json.loads("".join(x[5:].strip() for x in lines if x.startswith("data:"))))
    return rounds


def test_rounds_read_as_sentences(server, page):
    signed_in(page, server, "reader", "/ui/ask")
    page.get_by_label("Question").fill("What does tobacco smoking lead to?")
    page.get_by_role("button", name="Ask").click()
    expect(page.locator("#citations li").first).to_be_visible(timeout=120_000)
    # the same question again, read whole: the server replays the rounds it streamed to the page
    body = page.evaluate("""(q) => fetch('/ui/v1/ask', {method: 'POST', credentials: 'same-origin', body: JSON.stringify({question: q}),
        headers: {'Content-Type': 'application/json', 'Accept': 'text/event-stream',
                  'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content}}).then((r) => r.text())""",
                         "What does tobacco smoking lead to?")
    rounds = sse_rounds(body)
    assert rounds, "the offline model's drill-down has at least one round"
    with httpx.Client(base_url=server["base"], headers={"Authorization": f"Bearer {server['keys']['reader']}"}) as c:
        labels = {nid: c.get(f"/v1/nodes/{nid}").json()["label"] for r in rounds for nid in list(r["seeds"])[:3]}
    shown = page.locator("#rounds li.round")
    expect(shown).to_have_count(len(rounds))
    for i, r in enumerate(rounds):
        n = len(r["new_units"])
        expect(shown.nth(i)).to_contain_text(f"Round {r['round']}")
        text = shown.nth(i).inner_text()
        assert f"looked at {n} new fact" in text, text
        assert all(labels[nid] in text for nid in list(r["seeds"])[:3]), text
        if r["decision"].get("enough") is True:
            assert "enough" in text
        assert '{"' not in text and '":' not in text and "decision" not in text, text  # no JSON left


def test_a_finished_jobs_result_reads_as_words(server, page, tmp_path):
    f = tmp_path / "words.units"
    f.write_text("{job words} [is a] {test}\n{job words} [has] {three facts}\n{job words} [has] {a result}\n", "utf-8")
    signed_in(page, server, "writer", "/ui/jobs")
    job = upload_on_jobs_page(page, f)
    expect(page.locator("#jobs-table tr", has_text=job).locator(".status")).to_have_text("done", timeout=60_000)
    with httpx.Client(base_url=server["base"], headers={"Authorization": f"Bearer {server['keys']['writer']}"}) as c:
        result = c.get(f"/v1/jobs/{job}").json()["result"]
    cell = page.locator("#jobs-table tr", has_text=job).locator(".result").inner_text()
    assert f"{result['units_added']} units added" in cell, cell
    assert not re.search(r"[{}\"]", cell), cell
