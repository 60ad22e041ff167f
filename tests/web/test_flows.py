"""The page's forms over HTTP: each POST answers with a redirect (303) to a page that shows what
it did once (POST-redirect-GET), so a reload never posts again; the session's end reaches htmx."""

from __future__ import annotations

import html
import re

import httpx
from playwright.sync_api import expect

from kgservice.web.pages import safe_back
from tests.web.conftest import sign_in, web_client


def error_of(page: str) -> str | None:
    found = re.search(r'<p class="error" role="alert">([^<]*)</p>', page)
    return html.unescape(found.group(1)) if found else None


def test_back_is_only_a_page_of_this_site():
    for good in ("/ui/documents", "/ui/documents?doc=team%2Fkeep.units", "/ui/admin"):
        assert safe_back(good, "/ui/documents") == good
    for bad in ("https://evil.example/ui/x", "//evil.example/ui/x", "/\\evil.example", "/v1/admin/keys", "",
                "javascript:alert(1)", "/ui/../v1/stats", "/ui/x\r\nSet-Cookie: a=b"):
        assert safe_back(bad, "/ui/documents") == "/ui/documents"


def test_a_failed_replace_goes_back_to_the_document_keeping_the_text(server):
    client, csrf = web_client(server["base"], server["keys"]["writer"])
    back = "/ui/documents?doc=keep.units"
    typed = "#kp1 {茶} [is a] {typed but refused}\n"
    r = client.post("/ui/documents/replace", data={"doc": "keep.units", "text": typed, "version": "99",
                                                   "confirm": "yes", "csrf": csrf, "back": back})
    assert r.status_code == 303 and r.headers["location"] == back  # not the list rendered at the POST URL
    shown = client.get(back)
    assert shown.status_code == 200 and 'id="doc-title">keep.units<' in shown.text
    assert "version" in (error_of(shown.text) or "")
    assert html.escape(typed, quote=False).strip() in shown.text  # the text typed, in the form again
    again = client.get(back)  # the flash is shown once
    assert error_of(again.text) is None and "typed but refused" not in again.text
    assert "typed but refused" not in client.get("/ui/v1/documents/keep.units").json()["text"]


def test_a_write_without_confirmation_or_with_a_foreign_back_stays_on_this_site(server):
    client, csrf = web_client(server["base"], server["keys"]["writer"])
    r = client.post("/ui/documents/retract", data={"unit": "kp1", "reason": "r", "csrf": csrf,
                                                   "back": "/ui/documents?doc=keep.units"})
    assert r.status_code == 303 and r.headers["location"] == "/ui/documents?doc=keep.units"
    assert "confirmation box" in (error_of(client.get(r.headers["location"]).text) or "")
    for foreign in ("https://evil.example/", "//evil.example/ui/documents"):
        r = client.post("/ui/documents/retract", data={"unit": "kp1", "reason": "", "confirm": "yes",
                                                       "csrf": csrf, "back": foreign})
        assert r.status_code == 303 and r.headers["location"] == "/ui/documents"
        assert "reason" in (error_of(client.get("/ui/documents").text) or "")
    assert client.get("/ui/v1/units/kp1").status_code == 200  # nothing was retracted


def test_an_ended_session_sends_htmx_to_sign_in_and_says_why(server):
    base = server["base"]
    stale = {"kg_session": "no-such-session"}  # what a browser holds after a restart or a revoke
    with httpx.Client(base_url=base, cookies=stale) as client:
        r = client.get("/ui/jobs/list", headers={"HX-Request": "true"})
        assert r.status_code == 401 and r.headers["hx-redirect"] == "/ui/login?ended=1" and r.content == b""
        r = client.get("/ui/jobs")
        assert r.status_code == 303 and r.headers["location"] == "/ui/login?ended=1"
    assert "Your session ended" in httpx.get(base + "/ui/login?ended=1").text
    r = httpx.get(base + "/ui/jobs")  # never signed in: a plain sign-in, no talk of an ended session
    assert r.status_code == 303 and r.headers["location"] == "/ui/login"
    assert "Your session ended" not in httpx.get(base + "/ui/login").text


def test_jobs_table_refresh_after_a_revoke_takes_the_page_to_sign_in(server, page):
    base = server["base"]
    admin = {"Authorization": f"Bearer {server['keys']['admin']}"}
    made = httpx.post(base + "/v1/admin/keys", json={"user": "web-short-lived", "role": "writer"}, headers=admin)
    assert made.status_code == 201, made.text
    sign_in(page, base, made.json()["key"])
    page.goto(base + "/ui/jobs")
    expect(page.locator("#jobs-table")).to_be_visible()
    assert httpx.delete(base + f"/v1/admin/keys/{made.json()['key_id']}", headers=admin).status_code == 200
    page.wait_for_url(base + "/ui/login?ended=1")  # the whole page, on the table's next refresh
    expect(page.locator("#session-ended")).to_contain_text("Your session ended")
    expect(page.locator("#jobs")).to_have_count(0)


def key_state(client: httpx.Client, key_id: str) -> str:
    row = re.search(rf'<tr data-key-id="{re.escape(key_id)}">.*?<td class="state">([^<]*)</td>', client.get("/ui/admin").text,
                    re.S)
    assert row, key_id
    return row.group(1)


def test_revoking_a_key_needs_confirmation_and_never_takes_the_last_admin(server):
    base = server["base"]
    admin_key = server["keys"]["admin"]
    listed = httpx.get(base + "/v1/admin/keys", headers={"Authorization": f"Bearer {admin_key}"}).json()
    admins = [k["key_id"] for k in listed if k["role"] == "admin" and not k["revoked_at"]]
    own = admin_key.split("_")[1]
    assert admins == [own]  # the test server has one admin: this session's
    client, csrf = web_client(base, admin_key)
    r = client.post("/ui/admin/keys/revoke", data={"key_id": own, "csrf": csrf})  # no confirmation box
    assert r.status_code == 303 and r.headers["location"] == "/ui/admin"
    assert "confirmation box" in (error_of(client.get("/ui/admin").text) or "")
    r = client.post("/ui/admin/keys/revoke", data={"key_id": own, "confirm": "yes", "csrf": csrf})
    assert r.status_code == 303
    shown = client.get("/ui/admin")
    assert "only active admin key" in (error_of(shown.text) or "") and "your own key" in shown.text
    assert key_state(client, own) == "active"


def test_a_new_key_is_shown_once_after_a_redirect(server):
    client, csrf = web_client(server["base"], server["keys"]["admin"])
    before = client.get("/ui/admin").text.count("<tr data-key-id=")
    r = client.post("/ui/admin/keys", data={"user": "prg-once", "role": "reader", "csrf": csrf})
    assert r.status_code == 303 and r.headers["location"] == "/ui/admin"  # a reload re-gets, it does not re-post
    shown = client.get("/ui/admin").text
    key = re.search(r'<code id="new-key">([^<]+)</code>', shown).group(1)
    assert key.startswith("kg_") and "New key for prg-once (reader)" in shown
    assert shown.count("<tr data-key-id=") == before + 1
    again = client.get("/ui/admin").text
    assert key not in again and 'id="new-key"' not in again  # shown once
    assert again.count("<tr data-key-id=") == before + 1
    r = client.post("/ui/admin/keys", data={"user": "", "role": "reader", "csrf": csrf})
    assert r.status_code == 303 and error_of(client.get("/ui/admin").text)


def test_the_question_box_takes_as_much_as_the_server(server):
    from kgservice.server.models import MAX_QUESTION

    client, _ = web_client(server["base"], server["keys"]["reader"])
    assert re.search(rf'<input id="question"[^>]* maxlength="{MAX_QUESTION}"', client.get("/ui/ask").text)


def test_the_keys_table_shows_each_keys_workspaces(server):
    """The page's keys table names a key's workspaces with its role in each (the `workspaces`
    field of REST and `kg keys list --json`), and never the key."""
    base, admin_key = server["base"], server["keys"]["admin"]
    made = httpx.post(base + "/v1/admin/keys", json={"user": "ws-shown", "workspaces": {"default": "writer"}},
                      headers={"Authorization": f"Bearer {admin_key}"})
    assert made.status_code == 201, made.text
    client, _ = web_client(base, admin_key)
    page = client.get("/ui/admin").text
    row = re.search(rf'<tr data-key-id="{made.json()["key_id"]}">.*?</tr>', page, re.S)
    assert row and '<td class="workspaces">default:writer</td>' in row.group(0)
    assert made.json()["key"] not in page
