"""The page under a workspace's prefix (docs/workspaces.md): opened at ``/w/team-b/``, every link,
form, script request (fetch, EventSource, htmx) and redirect stays under ``/w/team-b/``, so the
page keeps acting in team-b while the user clicks through it. The key holds team-a and team-b;
without the prefix its page would act in team-a (its first workspace), where team-b's marker is
not stored, so a request that left the prefix would also show the wrong workspace's content."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from playwright.sync_api import expect

from tests.processes import serving
from tests.server.test_workspaces_rest import MARKER, _two_workspaces, workspace_key
from tests.web.conftest import CSRF_META

B = "/w/team-b"
URL_ATTRS = re.compile(r'\b(?:href|src|action|hx-get|hx-post|data-openapi)="([^"]*)"')


def _requests_to(page, base: str) -> list[str]:
    """Every request the page makes to the server from now on (paths with their query)."""
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url[len(base):]) if r.url.startswith(base) else None)
    return seen


def test_clicking_through_the_page_under_a_workspace_prefix_never_leaves_it(page, tmp_path: Path):
    env = _two_workspaces(tmp_path)
    key = workspace_key(env, "cy", "team-a:admin", "team-b:admin")
    with serving(env) as (base, _, _):
        seen = _requests_to(page, base)
        page.goto(base + B + "/")
        page.get_by_label("API key").fill(key)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(base + B + "/ui/ask")
        expect(page.locator("#workspace-select")).to_have_value("team-b")

        nav = page.get_by_role("navigation", name="main")
        nav.get_by_role("link", name="Documents").click()
        page.wait_for_url(base + B + "/ui/documents")
        page.locator("#docs tbody tr[data-doc]").first.get_by_role("link").click()
        expect(page.locator("#doc-title")).to_contain_text("notes.units")
        expect(page.locator("main")).to_contain_text(MARKER)  # team-b's version of the document
        page.get_by_role("link", name="History").click()
        expect(page.locator('#history tr[data-kind]').first).to_be_visible()
        page.get_by_role("link", name="All documents").click()
        page.wait_for_url(base + B + "/ui/documents")

        nav.get_by_role("link", name="Ask").click()
        page.wait_for_url(base + B + "/ui/ask")  # loaded: its script handles the form
        page.get_by_label("Question").fill("What does smoking cause?")
        page.get_by_role("button", name="Ask").click()
        citation = page.locator("button.citation").first
        expect(citation).to_be_visible(timeout=90_000)
        citation.click()  # the unit, its provenance and source lines: script requests
        expect(page.locator('#unit dd[data-field="notation"]')).not_to_be_empty()
        expect(page.locator("#unit-doc-link")).to_be_visible()
        page.locator("#unit-doc-link").click()
        expect(page.locator("#doc-title")).to_contain_text("notes.units")

        nav.get_by_role("link", name="Explore").click()
        page.wait_for_url(base + B + "/ui/explore")
        page.get_by_label("Search entry nodes").fill("smoking")
        page.get_by_role("button", name="Search").click()
        page.locator("button.hit", has_text="smoking").first.click()
        expect(page.locator("#node-title")).to_contain_text("smoking")
        expect(page.locator("#facts")).to_contain_text(MARKER)  # only team-b states it

        nav.get_by_role("link", name="Jobs").click()
        page.wait_for_url(base + B + "/ui/jobs")
        page.get_by_label("Upload a file").set_input_files(str(tmp_path / "team-b" / "notes.units"))
        page.get_by_role("button", name="Upload", exact=True).click()
        expect(page.locator("#upload-status")).to_contain_text("Queued job")
        expect(page.locator("#job-state")).to_have_attribute("data-status", "done", timeout=60_000)  # its events

        nav.get_by_role("link", name="Admin").click()
        page.wait_for_url(base + B + "/ui/admin")
        page.get_by_label("User").fill("dee")
        page.get_by_role("button", name="Create key").click()
        page.wait_for_url(base + B + "/ui/admin")
        expect(page.locator("#new-key")).to_be_visible()
        row = page.locator("#keys tr", has_text="dee")
        expect(row.locator(".workspaces")).to_have_text("team-b:reader")  # a key of the page's workspace
        page.get_by_role("link", name="Run doctor (check only)").click()
        page.wait_for_url(re.compile(re.escape(base + B) + r"/ui/admin/doctor"))
        nav.get_by_role("link", name="API").click()
        page.wait_for_url(base + B + "/docs")
        expect(page.locator("#swagger-ui .info")).to_be_visible(timeout=60_000)  # the OpenAPI document loaded
        page.get_by_role("link", name="← kgservice").click()
        page.wait_for_url(base + B + "/ui/ask")

        page.get_by_role("button", name="Sign out").click()
        page.wait_for_url(base + B + "/ui/login")
        left = [p for p in seen if not p.startswith(B + "/")]
        assert left == [], left
        assert len(seen) > 30  # the pages, their scripts and styles, and the script requests were all seen


def test_every_url_and_redirect_of_the_page_keeps_the_prefix(tmp_path: Path):
    """Over HTTP: the pages' links, forms, htmx and script attributes under ``/w/team-b/`` all
    start with it; sign-in, sign-out, the forms' redirects and the chooser keep the prefix (the
    chooser moves to the chosen workspace's); a ``back`` outside the prefix is not followed."""
    env = _two_workspaces(tmp_path)
    key = workspace_key(env, "cy", "team-a:admin", "team-b:admin")
    with serving(env) as (base, _, _), httpx.Client(base_url=base, follow_redirects=False) as client:
        assert client.get(B + "/").headers["location"] == B + "/ui/login"
        assert client.get(B + "/ui/ask").headers["location"] == B + "/ui/login"
        signed = client.post(B + "/ui/login", data={"key": key})
        assert signed.status_code == 303 and signed.headers["location"] == B + "/ui/ask"
        csrf = CSRF_META.search(client.get(B + "/ui/ask").text).group(1)
        pages = ["/ui/ask", "/ui/explore", "/ui/documents", "/ui/documents?doc=notes.units", "/ui/documents/history",
                 "/ui/documents/table", "/ui/jobs", "/ui/jobs/list", "/ui/admin", "/ui/admin/doctor", "/docs"]
        for path in pages:
            got = client.get(B + path)
            assert got.status_code == 200, (path, got.status_code)
            urls = [u for u in URL_ATTRS.findall(got.text) if u.startswith("/")]
            assert urls or path in ("/ui/jobs/list",), path
            assert [u for u in urls if not u.startswith(B + "/")] == [], (path, urls)
        back = B + "/ui/documents?doc=notes.units"
        for form_back, expected in ((back, back), ("/ui/documents?doc=notes.units", B + "/ui/documents"),
                                    ("https://evil.example/", B + "/ui/documents")):
            r = client.post(B + "/ui/documents/retract", data={"unit": "w2", "reason": "r", "csrf": csrf,
                                                               "back": form_back})  # no confirmation: nothing done
            assert r.status_code == 303 and r.headers["location"] == expected, (form_back, r.headers)
        shown = client.get(back).text
        assert "confirmation box" in shown  # the flash reached the page under the prefix
        for path in ("/ui/admin/keys", "/ui/admin/keys/revoke"):
            r = client.post(B + path, data={"csrf": csrf, "user": "", "key_id": "nope"})
            assert r.status_code == 303 and r.headers["location"] == B + "/ui/admin", (path, r.headers)
        chose = client.post(B + "/ui/workspace", data={"csrf": csrf, "workspace": "team-a",
                                                        "back": B + "/ui/documents"})
        assert chose.status_code == 303 and chose.headers["location"] == "/w/team-a/ui/documents"
        assert MARKER in client.get(B + "/ui/documents?doc=notes.units").text  # the path, not the cookie, decides
        assert MARKER not in client.get("/w/team-a/ui/documents?doc=notes.units").text
        out = client.post(B + "/ui/logout", data={"csrf": csrf})
        assert out.status_code == 303 and out.headers["location"] == B + "/ui/login"
        assert urlsplit(client.get(B + "/ui/ask").headers["location"]).path == B + "/ui/login"


def test_a_flash_set_under_one_workspaces_prefix_never_shows_under_anothers(tmp_path: Path):
    """One session signs in once for every workspace of its key, and a form's outcome waits in
    it for the page it came from. Set under ``/w/team-b/``, it is shown by team-b's page and not
    by team-a's same page (nor taken by it: team-b's page still shows it afterwards)."""
    env = _two_workspaces(tmp_path)
    key = workspace_key(env, "cy", "team-a:admin", "team-b:admin")
    told = "Tick the confirmation box first"
    with serving(env) as (base, _, _), httpx.Client(base_url=base, follow_redirects=False) as client:
        client.post(B + "/ui/login", data={"key": key})
        csrf = CSRF_META.search(client.get(B + "/ui/ask").text).group(1)
        r = client.post(B + "/ui/documents/retract", data={"unit": "w2", "reason": "r", "csrf": csrf,
                                                           "back": B + "/ui/documents"})
        assert r.headers["location"] == B + "/ui/documents"
        assert told not in client.get("/w/team-a/ui/documents").text
        assert told in client.get(B + "/ui/documents").text
        assert told not in client.get(B + "/ui/documents").text  # once
        r = client.post(B + "/ui/admin/keys", data={"csrf": csrf, "user": ""})  # no user: an error flash
        assert r.headers["location"] == B + "/ui/admin"
        alert = '<p class="error" role="alert">'
        assert alert not in client.get("/w/team-a/ui/admin").text
        assert alert in client.get(B + "/ui/admin").text
