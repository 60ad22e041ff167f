"""A PDF uploaded through the page becomes a document whose view shows its pages: a heading row
per page with a link to that page of the original, each line numbered within its page as a
citation counts it, and a citation's lines highlighted. In real Chromium against a real
`kg serve`. Pages and printed lines found by hand (tests/documents/test_convert.py)."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import expect

from tests.web.conftest import shoot, signed_in

PDF = Path(__file__).resolve().parents[1] / "data" / "documents" / "rivers.pdf"


def test_upload_a_pdf_and_open_its_page(server, page):
    base = signed_in(page, server, "writer", "/ui/jobs")
    upload = page.locator("#upload-file")
    for suffix in (".pdf", ".docx", ".pptx", ".html", ".xlsx", ".md", ".txt", ".units"):  # the library's list
        assert suffix in upload.get_attribute("accept").split(",")
    upload.set_input_files(str(PDF))
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page.locator("#upload-status")).to_contain_text("Queued job")
    expect(page.locator("#job-state")).to_have_attribute("data-status", "done", timeout=120_000)

    doc = page.request.get(base + "/ui/v1/documents/web-writer/rivers.pdf").json()
    starts = doc["pages"]
    assert doc["format"] == "pdf" and len(starts) == 3
    # the offline rules' unit from "The North Branch of the Millers River is a river in ..." cites
    # page 2, printed lines 2-3; the Ask page links a citation as ?lines=FIRST-LAST#LFIRST
    [(uid, lines)] = [(u, ln) for u, ln in doc["unit_lines"].items() if ln and ln[0] > starts[1] and ln[1] < starts[2]
                      and "North Branch" in page.request.get(base + f"/ui/v1/units/{u}").json()["subject"]]
    src = page.request.get(base + f"/ui/v1/units/{uid}").json()["sources"][0]
    assert src["location"] == "web-writer/rivers.pdf, page 2, lines 2–3"
    page.goto(base + f"/ui/documents?doc=web-writer/rivers.pdf&lines={lines[0]}-{lines[1]}#L{lines[0]}")
    expect(page.locator("#doc-format")).to_contain_text("PDF, 3 pages")
    head = page.locator("tr#page-2")
    expect(head).to_contain_text("Page 2")
    link = head.get_by_role("link", name="open page 2 of the original")
    assert link.get_attribute("href").endswith("/ui/v1/originals/web-writer/rivers.pdf#page=2")
    got = page.request.get(base + "/ui/v1/originals/web-writer/rivers.pdf")
    assert got.status == 200 and got.body() == PDF.read_bytes() and got.headers["content-type"] == "application/pdf"
    cited = page.locator("#doc-lines tr.cited")
    expect(cited).to_have_count(2)
    expect(cited.nth(0).locator("td.ln")).to_have_text("2")  # numbered within page 2, as printed
    expect(cited.nth(1).locator("td.ln")).to_have_text("3")
    expect(cited.nth(0).locator("td.src")).to_contain_text("The North Branch of the Millers River is a river")
    expect(page.locator(f"#L{starts[1]} td.ln")).to_have_text("1")  # the page's heading is its first line
    assert re.search(r"#L\d+$", page.url)
    shoot(page, "document-pages")
