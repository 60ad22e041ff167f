"""The web page end to end in a real headless Chromium against a real ``kg serve``."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from tests.web.conftest import XSS, find_path, shoot, sign_in, signed_in, upload_on_jobs_page


def query(page, label: str, text: str, button: str) -> None:
    """``text`` in the search or filter field ``label``, sent with its ``button``."""
    page.get_by_label(label).fill(text)
    page.get_by_role("button", name=button).click()


def test_reader_asks_sees_rounds_and_opens_a_citation(server, page):
    base = server["base"]
    # signed out: the page asks for a key; the API behind it refuses
    page.goto(base + "/ui/ask")
    expect(page.get_by_label("API key")).to_be_visible()
    assert httpx.post(base + "/ui/v1/search", json={"query": "smoking"}).status_code == 401
    sign_in(page, base, server["keys"]["reader"])
    cookie = next(c for c in page.context.cookies() if c["name"] == "kg_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert server["keys"]["reader"] not in page.content() and server["keys"]["reader"] not in page.url
    stored = page.evaluate("() => JSON.stringify([Object.keys(localStorage), Object.keys(sessionStorage), document.cookie])")
    assert server["keys"]["reader"] not in stored and "kg_session" not in stored
    resp = page.request.get(base + "/ui/ask")
    assert resp.headers["cache-control"] == "no-store"
    assert "script-src 'self'" in resp.headers["content-security-policy"]
    assert "unsafe-inline" not in resp.headers["content-security-policy"]
    # a reader sees no Jobs or Admin entry; Documents is a marked placeholder
    nav = page.get_by_role("navigation", name="main")
    expect(nav.get_by_role("link", name="Ask")).to_be_visible()
    expect(nav.get_by_role("link", name="Admin")).to_have_count(0)
    expect(nav.get_by_role("link", name="Jobs")).to_have_count(0)
    expect(page.locator("#offline-note")).to_contain_text("without a model")

    page.get_by_label("Question").fill("What does smoking cause?")
    page.get_by_role("button", name="Ask").click()
    # the first, uncached drill-down may take a while on a loaded machine: no wall-clock assertion
    expect(page.locator("#rounds li.round").first).to_be_visible(timeout=90_000)
    expect(page.get_by_role("heading", name="Rounds")).to_be_visible()  # shown once there are rounds
    citation = page.locator("button.citation").first
    expect(citation).to_be_visible(timeout=90_000)
    expect(page.locator("#answer button.cite-ref").first).to_have_text("[1]")
    expect(page.locator("#answer .answer-text")).not_to_be_empty()
    citation.click()
    expect(page.locator('#unit dd[data-field="notation"]')).to_contain_text("smoking")
    expect(page.locator('#unit dd[data-field="doc"]')).not_to_have_text("—")
    expect(page.locator('#unit dd[data-field="lines"]')).to_be_visible()
    expect(page.locator('#unit dd[data-field="superseded_by"]')).to_be_visible()
    expect(page.locator("#unit-source")).not_to_be_empty()  # the source lines, or why there are none
    shoot(page, "ask")

    page.get_by_label("Question").fill("What is the boiling point of mercury?")
    page.get_by_role("button", name="Ask").click()
    expect(page.locator("#answer .not-in-graph")).to_contain_text("Not in the graph", timeout=90_000)
    assert not [e for e in page.kg_errors if e.startswith("dialog:")]  # no alert() ran


def test_explore_search_node_graph_and_path(server, page):
    signed_in(page, server, "reader", "/ui/explore")
    query(page, "Search entry nodes", "smoking", "Search")
    page.locator("button.hit", has_text="smoking").first.click()
    expect(page.locator("#node-title")).to_contain_text("smoking")
    expect(page.locator("#facts li").first).to_be_visible()
    expect(page.locator("#facts .facts-family h4").first).to_contain_text("(")  # a named family with its count
    expect(page.locator("#graph canvas").first).to_be_attached()
    assert page.evaluate("() => getComputedStyle(document.getElementById('graph')).position") == "relative"  # Cytoscape's need
    expect(page.locator("#legend li").first).to_be_visible()
    page.get_by_label("spreading activation").check()
    expect(page.locator("#ranked li").first).to_contain_text("activation")
    find_path(page, "smoking", "lung cancer")
    shoot(page, "explore")
    assert not [e for e in page.kg_errors if e.startswith("dialog:")]  # no alert() ran


def test_xss_unit_renders_as_text(server, page):
    signed_in(page, server, "reader", "/ui/explore")
    query(page, "Search entry nodes", XSS, "Search")
    hit = page.locator("button.hit", has_text="<script>").first
    expect(hit).to_contain_text(XSS)
    assert page.locator("main script").count() == 0  # no element was made from the label
    assert not page.kg_errors  # alert() would have opened a dialog


def test_reader_cannot_write(server, page):
    base = signed_in(page, server, "reader", "/ui/jobs")
    expect(page.get_by_text("needs the writer role")).to_be_visible()
    page.goto(base + "/ui/admin")
    expect(page.get_by_text("needs the admin role")).to_be_visible()
    csrf = page.locator('meta[name="csrf-token"]').get_attribute("content")
    body = {"units": "#w1 {a} [b] {c}", "doc": "w.units"}
    # without a CSRF token, with a wrong one: refused before the route; with the right one: the role refuses
    assert page.request.post(base + "/ui/v1/ingest", data=body).status == 403
    r = page.request.post(base + "/ui/v1/ingest", data=body, headers={"X-CSRF-Token": "wrong"})
    assert r.status == 403 and "CSRF" in r.json()["detail"]
    r = page.request.post(base + "/ui/v1/ingest", data=body, headers={"X-CSRF-Token": csrf})
    assert r.status == 403 and "writer role" in r.json()["detail"]
    r = page.request.post(base + "/ui/admin/keys", form={"user": "mallory", "role": "admin"})
    assert r.status == 403
    r = page.request.post(base + "/ui/admin/keys", form={"user": "mallory", "role": "admin", "csrf": csrf})
    assert r.status == 403
    # signing out ends the session on the server: the old cookie no longer works
    page.goto(base + "/ui/ask")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("API key")).to_be_visible()
    assert page.request.get(base + "/ui/v1/stats").status == 401


def test_writer_uploads_units_and_sees_the_job_finish(server, page):
    f = server["root"] / "upload.units"
    f.write_text("#u1 {web upload} [is a] {test file}\n", "utf-8")
    signed_in(page, server, "writer", "/ui/jobs")
    job = upload_on_jobs_page(page, f)
    expect(page.locator("#job-state")).to_have_attribute("data-status", "done", timeout=60_000)  # the live stream
    expect(page.locator('#job-events li[data-status="done"]')).to_have_count(1)
    expect(page.locator("#jobs-table tr", has_text=job).locator(".status")).to_have_text("done", timeout=60_000)
    shoot(page, "jobs")


def test_admin_creates_and_revokes_a_key(server, page):
    base = signed_in(page, server, "admin", "/ui/admin")
    page.get_by_label("User").fill("newcomer")
    page.get_by_label("Role").select_option("reader")
    page.get_by_role("button", name="Create key").click()
    key = page.locator("#new-key").inner_text().strip()
    assert key.startswith("kg_")
    key_id = key.split("_")[1]
    assert httpx.get(base + "/v1/stats", headers={"Authorization": f"Bearer {key}"}).status_code == 200
    expect(page.locator("#stats")).to_contain_text("backend")
    shoot(page, "admin")
    page.goto(base + "/ui/admin")
    expect(page.locator("#new-key")).to_have_count(0)  # shown once
    page.get_by_label(f"confirm revoking {key_id}").check()  # the browser refuses the form without it
    page.get_by_role("button", name=f"revoke {key_id}").click()
    expect(page.locator(f'tr[data-key-id="{key_id}"] .state')).to_contain_text("revoked")
    assert httpx.get(base + "/v1/stats", headers={"Authorization": f"Bearer {key}"}).status_code == 401


def test_writer_reads_a_document_beside_its_units_and_forgets_it(server, page):
    base = signed_in(page, server, "writer", "/ui/documents")
    query(page, "Search documents", "forget-me", "Search")
    rows = page.locator("#docs tbody tr[data-doc]")
    expect(rows).to_have_count(1)
    rows.first.get_by_role("link").click()
    expect(page.locator("#doc-title")).to_contain_text("forget-me.units")
    # each line of the text has the unit it states beside it
    expect(page.locator("#L1 .line-unit")).to_contain_text("web page")
    expect(page.locator("#L2 .line-unit")).to_contain_text("two lines")
    unit = page.locator("#L1 .line-unit").get_attribute("data-unit")
    shoot(page, "document")
    # forgetting needs the confirmation box (the browser refuses the form without it)
    page.get_by_role("button", name="Forget").click()
    expect(page.locator("#change-done")).to_have_count(0)
    page.get_by_label(re.compile("Yes, forget .*forget-me")).check()
    page.get_by_role("button", name="Forget").click()
    # forgetting is a job, as over REST: the page follows it live, then says what it changed
    expect(page.locator("#doc-job")).to_contain_text("(forget)")
    expect(page.locator("#job-state")).to_have_attribute("data-status", "done", timeout=60_000)
    expect(page.locator("#change-done")).to_contain_text("forget")
    expect(page.locator("#change-done")).to_contain_text("2 retracted")
    assert page.request.get(base + f"/ui/v1/units/{unit}").status == 404
    page.goto(base + "/ui/documents?q=forget-me")
    expect(page.locator("#docs tbody tr[data-doc]")).to_have_count(0)
    page.goto(base + "/ui/documents/history")
    expect(page.locator('#history tr[data-kind="forget"]').first).to_be_visible()


def test_writer_replaces_a_document_and_follows_the_job(server, page):
    base = signed_in(page, server, "writer", "/ui/documents?doc=replace-me.units")
    expect(page.locator("#L1 .line-unit")).to_contain_text("first step")
    page.get_by_label("New text of replace-me.units").fill("{draft plan} [has] {second step}\n")
    page.get_by_label(re.compile("Yes, replace")).check()
    page.get_by_role("button", name="Replace").click()
    page.wait_for_url(base + "/ui/documents?doc=replace-me.units")  # back on the document, not at the POST URL
    # replacing is a job, as over REST: queued, followed live, then what it changed
    expect(page.locator("#doc-job")).to_contain_text("(replace)")
    expect(page.locator("#job-state")).to_have_attribute("data-status", "done", timeout=60_000)
    expect(page.locator("#change-done")).to_contain_text("1 added, 1 retracted")
    doc = page.request.get(base + "/ui/v1/documents/replace-me.units").json()
    assert doc["version"] == 2 and "second step" in doc["text"]
    # the form carries the version it showed: the form of a page read before the change is a conflict
    csrf = page.locator('meta[name="csrf-token"]').get_attribute("content")
    r = page.request.post(base + "/ui/documents/replace", form={
        "doc": "replace-me.units", "text": "{draft plan} [has] {third step}\n", "version": "1", "confirm": "yes",
        "csrf": csrf, "back": "/ui/documents?doc=replace-me.units"})
    assert r.url == base + "/ui/documents?doc=replace-me.units"  # followed the 303 to the document
    assert "at version 2, not 1" in r.text() and "third step" in r.text()  # the error, and the text kept
    assert "third step" not in page.request.get(base + "/ui/v1/documents/replace-me.units").json()["text"]


def test_reader_browses_documents_but_cannot_change_them(server, page):
    base = signed_in(page, server, "reader", "/ui/documents?q=keep")
    expect(page.locator("#docs tbody tr[data-doc]")).to_have_count(1)
    page.locator("#docs tbody tr[data-doc] a").first.click()
    expect(page.locator("#doc-lines")).to_be_visible()
    expect(page.locator("#L1 .line-unit")).to_contain_text("{茶} [is a] {飲み物}")  # CJK labels render as text
    expect(page.get_by_role("button", name="Forget")).to_have_count(0)
    expect(page.get_by_role("button", name=re.compile("^retract"))).to_have_count(0)
    csrf = page.locator('meta[name="csrf-token"]').get_attribute("content")
    doc = page.locator("#doc-title").inner_text()
    for path, form in (("/ui/documents/forget", {"doc": doc}), ("/ui/documents/retract", {"unit": "x1", "reason": "r"}),
                       ("/ui/documents/undo", {"change": "c-1"})):
        r = page.request.post(base + path, form={**form, "confirm": "yes", "csrf": csrf})
        assert r.status == 403 and "role" in r.text()
    page.goto(base + "/ui/documents?q=" + doc)
    expect(page.locator("#docs tbody tr[data-doc]")).to_have_count(1)  # still there
