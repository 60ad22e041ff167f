"""The Documents pages at a team's scale, in a real Chromium against a real ``kg serve``: the
list's paging, sorting, search and status column; history on its own tab; many files and a
folder uploaded at once (chosen, or dropped) with each file's job status; and a document page
that shows what a replacement or a forget left, without a reload."""

from __future__ import annotations

import re
import time

import httpx
from playwright.sync_api import expect

from tests.web.conftest import signed_in
from tests.web.test_access import tab_to


def api(server: dict, role: str = "writer") -> httpx.Client:
    return httpx.Client(base_url=server["base"], headers={"Authorization": f"Bearer {server['keys'][role]}"},
                        timeout=60)


def put_document(server: dict, doc: str, text: str) -> None:
    """A document stored through REST (a replace job), waited for."""
    with api(server) as c:
        r = c.put(f"/v1/documents/{doc}", json={"text": text})
        assert r.status_code == 202, r.text
        job = r.json()["job_id"]
        for _ in range(600):  # polled, not timed: the job runs in the server's own worker
            st = c.get(f"/v1/jobs/{job}").json()
            if st["status"] in ("done", "failed"):
                break
            time.sleep(0.2)
        assert st["status"] == "done", st


def rows(page) -> list[str]:
    return page.locator("#docs tbody tr[data-doc]").evaluate_all("(trs) => trs.map((t) => t.dataset.doc)")


def stored(server: dict) -> list[dict]:
    with api(server, "reader") as c:
        return c.get("/v1/documents").json()


def test_the_list_pages_sorts_and_searches_with_a_status_column(server, page):
    for i in range(7):  # enough documents for several pages of 4
        put_document(server, f"paging/doc-{i:02d}.units", "".join(f"{{pg{i}}} [has] {{part {k}}}\n" for k in range(i + 1)))
    docs = stored(server)
    by_id = sorted(d["id"] for d in docs)
    base = signed_in(page, server, "reader", "/ui/documents?per=4")
    assert rows(page) == by_id[:4]
    expect(page.locator("#docs-count")).to_contain_text(f"Showing 1–4 of {len(docs)}")
    expect(page.locator(f'#docs tr[data-doc="{by_id[0]}"] td.status')).to_have_text("ready")
    page.get_by_role("link", name="Next →").click()
    assert rows(page) == by_id[4:8]
    # sorting by units, most first (ties by id), from the column header; a second click turns it round
    page.get_by_role("link", name="units", exact=True).click()
    page.get_by_role("link", name=re.compile("^units ▲")).click()
    want = [d["id"] for d in sorted(docs, key=lambda d: (d["units"], d["id"]), reverse=True)]
    assert rows(page) == want[:4]
    expect(page.locator('th[aria-sort="descending"]')).to_contain_text("units")
    # the search box narrows the list (and keeps the sort)
    page.get_by_label("Search documents").fill("paging/doc-0")
    page.get_by_role("button", name="Search").click()
    assert rows(page) == [f"paging/doc-{i:02d}.units" for i in (6, 5, 4, 3)]
    expect(page.locator("#docs-count")).to_contain_text("of 7 documents matching")
    # keyboard only: the next page through its link
    page.goto(base + "/ui/documents?per=4&q=paging")
    tab_to(page, 'a[rel="next"]', most=80)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"page=2"))
    assert rows(page) == [f"paging/doc-{i:02d}.units" for i in (4, 5, 6)]


def test_history_has_its_own_tab(server, page):
    put_document(server, "history/tab.units", "{history tab} [is a] {test}\n")
    with api(server, "reader") as c:
        changes = c.get("/v1/history").json()
    signed_in(page, server, "admin", "/ui/documents")
    expect(page.locator("#history")).to_have_count(0)  # not below the list any more
    page.get_by_role("navigation", name="documents").get_by_role("link", name="History").click()
    page.wait_for_url(server["base"] + "/ui/documents/history")
    shown = page.locator("#history tbody tr[data-change]").evaluate_all("(trs) => trs.map((t) => t.dataset.change)")
    assert shown == [c["id"] for c in reversed(changes)][:50]  # newest first, one page
    expect(page.get_by_role("button", name=f"undo {changes[-1]['id']}")).to_be_visible()


def test_many_files_and_a_folder_upload_with_each_files_status(server, page, tmp_path):
    good = tmp_path / "good.units"
    good.write_text("#up1 {upload one} [is a] {test file}\n#up2 {upload one} [has] {two facts}\n", "utf-8")
    bad = tmp_path / "bad.units"
    bad.write_text("{broken [is a] {test}\n", "utf-8")
    other = tmp_path / "picture.bmp"
    other.write_bytes(b"BM not a document")
    folder = tmp_path / "team-notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.units").write_text("{folder a} [is a] {note}\n", "utf-8")
    (folder / "sub" / "b.units").write_text("{folder b} [is a] {note}\n", "utf-8")
    signed_in(page, server, "writer", "/ui/documents")
    page.get_by_label("Files").set_input_files([str(good), str(bad), str(other)])
    status = lambda name: page.locator(f'#upload-list tr[data-file="{name}"] .upload-status')  # noqa: E731
    expect(status("good.units")).to_have_attribute("data-status", "done", timeout=60_000)
    expect(status("good.units")).to_contain_text("2 units added")
    expect(status("bad.units")).to_have_attribute("data-status", "refused")
    expect(status("bad.units")).to_contain_text("bad.units:1:")  # the notation error's line:column
    expect(status("picture.bmp")).to_have_attribute("data-status", "skipped")
    # the list below shows the new document without a reload
    expect(page.locator('#docs tr[data-doc="web-writer/good.units"] td.status')).to_have_text("ready", timeout=30_000)
    page.get_by_label("A folder").set_input_files(str(folder))
    for name in ("team-notes/a.units", "team-notes/sub/b.units"):
        expect(status(name)).to_have_attribute("data-status", "done", timeout=60_000)
    expect(page.locator("#upload-summary")).to_contain_text("5 of 5 files finished")
    ids = {d["id"] for d in stored(server)}
    assert {"web-writer/good.units", "web-writer/team-notes/a.units", "web-writer/team-notes/sub/b.units"} <= ids
    assert not any("bad.units" in i or "picture" in i for i in ids)


def test_files_dropped_on_the_page_are_uploaded(server, page):
    signed_in(page, server, "writer", "/ui/documents")
    dt = page.evaluate_handle("""() => { const dt = new DataTransfer();
        dt.items.add(new File(['{dropped one} [is a] {file}\\n'], 'dropped-1.units'));
        dt.items.add(new File(['{dropped two} [is a] {file}\\n'], 'dropped-2.units'));
        return dt; }""")
    page.dispatch_event("#drop-zone", "dragover", {"dataTransfer": dt})
    page.dispatch_event("#drop-zone", "drop", {"dataTransfer": dt})
    for name in ("dropped-1.units", "dropped-2.units"):
        expect(page.locator(f'#upload-list tr[data-file="{name}"] .upload-status')).to_have_attribute(
            "data-status", "done", timeout=60_000)
    assert {"web-writer/dropped-1.units", "web-writer/dropped-2.units"} <= {d["id"] for d in stored(server)}


def test_keyboard_only_upload(server, page, tmp_path):
    f = tmp_path / "keys.units"
    f.write_text("{keyboard upload} [is a] {test}\n", "utf-8")
    # Playwright turns on file-chooser interception when the first listener subscribes, and sends
    # that without waiting for a reply; subscribing at the key press itself races the press on a
    # loaded machine (the chooser then opens natively, unseen). Subscribe before the page loads.
    choosers: list = []
    page.on("filechooser", lambda c: choosers.append(c))
    signed_in(page, server, "writer", "/ui/documents")
    tab_to(page, "#upload-files", most=40)
    with page.expect_file_chooser() as chooser:
        page.keyboard.press("Space")
    chooser.value.set_files(str(f))
    assert choosers == [chooser.value]  # one chooser, opened by the key press
    expect(page.locator('#upload-list tr[data-file="keys.units"] .upload-status')).to_have_attribute(
        "data-status", "done", timeout=60_000)


def test_upload_offers_the_formats_the_server_reads(server):
    from kgservice.pipeline.ingest import accepted_formats

    with httpx.Client(base_url=server["base"]) as c:
        c.post("/ui/login", data={"key": server["keys"]["writer"]})
        html = c.get("/ui/documents").text
    accept = re.search(r'<input id="upload-files" type="file" multiple accept="([^"]*)"', html).group(1)
    assert accept.split(",") == [f["suffix"] for f in accepted_formats()]
    assert {".units", ".md", ".txt"} <= set(accept.split(","))


def test_after_a_replace_the_document_page_shows_the_new_version(server, page):
    text = "{replace page} [has] {first step}\n{replace page} [has] {second step}\n"
    put_document(server, "pages/replace-view.units", text)
    base = signed_in(page, server, "writer", "/ui/documents?doc=pages/replace-view.units")
    box = page.get_by_label("New text of pages/replace-view.units")
    with api(server, "reader") as c:
        current = c.get("/v1/documents/pages/replace-view.units").json()["text"]
    assert "second step" in current and box.input_value() == current  # starts as the current text, to edit
    box.fill(text.replace("second step", "better second step"))
    page.get_by_label(re.compile("Yes, replace")).check()
    page.get_by_role("button", name="Replace").click()
    expect(page.locator("#doc-job")).to_contain_text("(replace)")
    page.evaluate("() => { window.__same_page = true; }")  # gone if the page were reloaded
    expect(page.locator("#change-done")).to_contain_text("1 added, 1 retracted", timeout=60_000)
    expect(page.locator("#doc-version")).to_have_text("2")
    expect(page.locator("#doc-lines")).to_contain_text("better second step")
    with api(server, "reader") as c:
        now = c.get("/v1/documents/pages/replace-view.units").json()["text"]
    assert now == text.replace("second step", "better second step")  # the line ends it had (a form sends CRLF)
    assert page.get_by_label("New text of pages/replace-view.units").input_value() == now
    expect(page.locator('#history tr[data-kind="replace"]')).to_have_count(1)
    assert page.evaluate("() => window.__same_page") is True
    assert page.url == base + "/ui/documents?doc=pages/replace-view.units"


def test_after_a_forget_the_document_page_no_longer_offers_changes(server, page):
    put_document(server, "pages/forget-view.units", "{forget page} [is a] {short note}\n")
    signed_in(page, server, "writer", "/ui/documents?doc=pages/forget-view.units")
    page.get_by_label(re.compile("Yes, forget")).check()
    page.get_by_role("button", name="Forget").click()
    expect(page.locator("#doc-job")).to_contain_text("(forget)")
    page.evaluate("() => { window.__same_page = true; }")
    expect(page.locator("#change-done")).to_contain_text("1 retracted", timeout=60_000)
    expect(page.locator("#doc-gone")).to_contain_text("was forgotten")
    for name in ("Forget", "Replace", re.compile("^retract")):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    expect(page.locator('#history tr[data-kind="forget"]')).to_have_count(1)
    assert page.evaluate("() => window.__same_page") is True
