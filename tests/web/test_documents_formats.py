"""A team's documents through the Documents page, in real Chromium against a real ``kg serve``
(the rule-based stand-in model, nothing ingested before): a PDF, a Word file, a deck and a web
page chosen together upload as one job each and end done, a password-protected PDF and a damaged
Word file are refused with the server's reason naming them, and nothing of those is stored. Then
an answer's citation opens the PDF at its page and lines: the cited unit says "page 2, lines
3–4", and its document link lands on those two rows, numbered 3 and 4 within page 2, under the
page's heading with a link to that page of the original. Once with the mouse, once with the
keyboard only.

Pages and printed lines read off the PDF by hand with poppler's ``pdftotext -layout -f 2 -l 2``:
line 3 is "Massachusetts in the United States. It is a tributary of the Millers River, which flows
west to the", line 4 "Connecticut River, which in turn flows south to Long Island Sound, ...";
the sentence the rule-based answer quotes ("It is a tributary of the Millers River ...") spans
them."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.processes import env_for, new_key, serving
from tests.web.conftest import signed_in
from tests.web.test_access import tab_to

DATA = Path(__file__).resolve().parents[1] / "data"
GOOD = ("rivers.pdf", "airports.docx", "olympics.pptx", "universities.html")
BAD = {"encrypted.pdf": re.compile(r"encrypted\.pdf: the PDF is password-protected.*qpdf --decrypt"),
       "truncated.docx": re.compile(r"truncated\.docx: .*damaged.*incomplete")}
QUESTION = "What is the North Branch of the Millers River?"


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory) -> Iterator[dict]:
    root = tmp_path_factory.mktemp("web-formats")
    env = env_for(root / "kg", KG_ALLOWED_HOSTS="127.0.0.1,localhost")
    files = root / "upload"
    files.mkdir()
    for name in GOOD:
        shutil.copy(DATA / "documents" / name, files / name)
    for name in BAD:
        shutil.copy(DATA / "documents-bad" / name, files / name)
    keys = {role: new_key(env, f"web-{role}", role) for role in ("reader", "writer")}
    with serving(env) as (base, proc, log):
        yield {"base": base, "keys": keys, "files": files, "log": log}


@pytest.fixture(scope="module")
def uploaded(docs_server, browser) -> dict:
    """The four documents and the two bad files chosen together on the Documents page."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    try:
        signed_in(page, docs_server, "writer", "/ui/documents")
        accept = page.locator("#upload-files").get_attribute("accept").split(",")
        assert {".pdf", ".docx", ".pptx", ".html"} <= set(accept)
        names = [*GOOD, *BAD]
        page.get_by_label("Files").set_input_files([str(docs_server["files"] / n) for n in names])
        status = lambda name: page.locator(f'#upload-list tr[data-file="{name}"] .upload-status')  # noqa: E731
        for name in GOOD:
            expect(status(name)).to_have_attribute("data-status", "done", timeout=180_000)
            expect(status(name)).to_contain_text("units added")
        for name, reason in BAD.items():
            expect(status(name)).to_have_attribute("data-status", "refused")
            expect(status(name)).to_contain_text(reason)
        expect(page.locator("#upload-summary")).to_contain_text("6 of 6 files finished")
        # the list below shows the new documents, ready, without a reload
        for name in GOOD:
            expect(page.locator(f'#docs tr[data-doc="web-writer/{name}"] td.status')).to_have_text(
                "ready", timeout=30_000)
    finally:
        ctx.close()
    with httpx.Client(base_url=docs_server["base"], timeout=60,
                      headers={"Authorization": f"Bearer {docs_server['keys']['reader']}"}) as c:
        stored = {d["id"]: d for d in c.get("/v1/documents").json()}
        pdf = c.get("/v1/documents/web-writer/rivers.pdf").json()
    return {"stored": stored, "pdf": pdf}


def test_four_formats_upload_and_bad_files_are_refused(uploaded):
    stored = uploaded["stored"]
    assert set(stored) == {f"web-writer/{n}" for n in GOOD}  # the refused files stored nothing
    assert {d["id"]: d["format"] for d in stored.values()} == {
        "web-writer/rivers.pdf": "pdf", "web-writer/airports.docx": "docx",
        "web-writer/olympics.pptx": "pptx", "web-writer/universities.html": "html"}
    assert all(d["units"] > 0 and d["original_stored"] for d in stored.values())


def _check_document_view(page, pdf: dict) -> None:
    """The document view as a citation opens it: the cited rows are page 2's lines 3 and 4."""
    p2 = pdf["pages"][1]  # the text line page 2 starts at
    expect(page.locator("#doc-title")).to_have_text("web-writer/rivers.pdf")
    cited = page.locator("#doc-lines tr.cited")
    expect(cited).to_have_count(2)
    expect(cited.nth(0).locator("td.ln")).to_have_text("3")
    expect(cited.nth(1).locator("td.ln")).to_have_text("4")
    expect(cited.nth(0).locator("td.src")).to_contain_text("It is a tributary of the Millers River")
    expect(cited.nth(1).locator("td.src")).to_contain_text("Connecticut River, which in turn flows south")
    expect(cited.nth(0)).to_have_attribute("aria-current", "true")
    expect(cited.nth(0)).to_be_in_viewport()  # the page opened at the cited lines
    assert page.url.endswith("#" + cited.nth(0).get_attribute("id"))
    assert int(cited.nth(0).get_attribute("id")[1:]) > p2  # text lines after page 2's first
    # page 2's heading row comes before them and links to that page of the original
    assert page.locator("#doc-lines tr").evaluate_all(
        "(trs) => trs.findIndex((t) => t.id === 'page-2') < trs.findIndex((t) => t.classList.contains('cited'))")
    link = page.locator("tr#page-2").get_by_role("link", name="open page 2 of the original")
    assert link.get_attribute("href").endswith("/ui/v1/originals/web-writer/rivers.pdf#page=2")


def test_a_citation_opens_the_pdf_at_its_page_and_lines(docs_server, uploaded, page):
    signed_in(page, docs_server, "reader", "/ui/ask")
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_role("button", name="Ask").click()
    citation = page.locator("button.citation").first
    expect(citation).to_be_visible(timeout=120_000)
    citation.click()
    expect(page.locator('#unit dd[data-field="doc"]')).to_have_text("web-writer/rivers.pdf")
    expect(page.locator('#unit dd[data-field="lines"]')).to_have_text("web-writer/rivers.pdf, page 2, lines 3–4")
    page.get_by_role("link", name="Open the document").click()
    page.wait_for_url("**/ui/documents?doc=*")
    _check_document_view(page, uploaded["pdf"])
    assert not page.kg_errors


def test_keyboard_only_the_citation_opens_the_page(docs_server, uploaded, page):
    signed_in(page, docs_server, "reader", "/ui/ask")
    tab_to(page, "#question")
    page.keyboard.type(QUESTION)
    page.keyboard.press("Enter")
    expect(page.locator("button.citation").first).to_be_visible(timeout=120_000)
    tab_to(page, "button.citation")
    page.keyboard.press("Enter")
    expect(page.locator('#unit dd[data-field="lines"]')).to_contain_text("page 2, lines 3–4")
    tab_to(page, "#unit-doc-link", most=60)
    page.keyboard.press("Enter")
    page.wait_for_url("**/ui/documents?doc=*")
    _check_document_view(page, uploaded["pdf"])
