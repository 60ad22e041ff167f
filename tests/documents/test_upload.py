"""Documents through the server: POST /v1/ingest with a file's bytes (base64, as the web page's
upload and `kg ingest --server` send them) and the MCP tool ingest_file become the document
<user>/<file name>, with its pages and original; GET /v1/originals/{id} gives the file back;
a unit's sources name its page. Pages and lines found by hand (tests/documents/test_convert.py)."""

from __future__ import annotations

import base64
from pathlib import Path

from kgservice.jobs.worker import Worker
from tests.server.conftest import auth
from tests.server.test_mcp import call, make, run

DATA = Path(__file__).resolve().parents[1] / "data"


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


def test_rest_upload_original_and_page_citation(client, keys, kb):
    w, r_ = auth(keys["writer"]), auth(keys["reader"])
    pdf = DATA / "documents" / "rivers.pdf"
    r = client.post("/v1/ingest", json={"file": _b64(pdf), "doc": "rivers.pdf"}, headers=w)
    assert r.status_code == 202, r.text
    job = Worker(kb).run_once()
    assert job.status == "done", job.error
    doc = client.get("/v1/documents/user-writer/rivers.pdf", headers=r_).json()
    assert (doc["format"], doc["original_stored"], len(doc["pages"])) == ("pdf", True, 3)
    got = client.get("/v1/originals/user-writer/rivers.pdf", headers=r_)
    assert got.status_code == 200 and got.content == pdf.read_bytes()
    assert got.headers["content-type"] == "application/pdf" and got.headers["content-disposition"].startswith("inline")
    # the offline rules read "The North Branch of the Millers River is a river in ..." (page 2, printed lines 2-3)
    [uid] = [u for u in doc["unit_lines"] if kb.unit(u).unit.subject == "North Branch of the Millers River"]
    unit = client.get(f"/v1/units/{uid}", headers=r_).json()
    [src] = unit["sources"]
    assert (src["page"], src["page_lines"], src["location"]) == (2, [2, 3], "user-writer/rivers.pdf, page 2, lines 2–3")
    assert client.get("/v1/originals/corpus.units", headers=r_).status_code == 404


def test_an_uploaded_web_page_comes_back_only_as_a_download(client, keys, kb):
    w = auth(keys["writer"])
    page = DATA / "documents" / "universities.html"
    assert client.post("/v1/ingest", json={"file": _b64(page), "doc": "unis.html"}, headers=w).status_code == 202
    assert Worker(kb).run_once().status == "done"
    got = client.get("/v1/originals/user-writer/unis.html", headers=w)
    assert got.content == page.read_bytes() and got.headers["content-disposition"].startswith("attachment")
    assert got.headers["content-security-policy"] == "sandbox"


def test_mcp_ingest_file(settings, kb):
    _, writer = make(settings, kb, "writer")
    bad = run(call(writer, "ingest_file", {"data_base64": _b64(DATA / "documents-bad" / "truncated.docx"),
                                           "name": "minutes.docx"}))
    assert bad.is_error and "minutes.docx" in bad.content[0].text and "incomplete" in bad.content[0].text
    assert kb.jobs.list(user="local") == []
    ok = run(call(writer, "ingest_file", {"data_base64": _b64(DATA / "documents" / "olympics.pptx"),
                                          "name": "olympics.pptx"}))
    assert not ok.is_error, ok.content
    assert Worker(kb).run_once().status == "done"
    rec = kb.document("local/olympics.pptx")
    assert rec.format == "pptx" and len(rec.pages) == 6


def test_kg_ingest_server_sends_documents_as_bytes_after_reading_them(tmp_path: Path):
    """`kg ingest --server URL` converts each document locally first (an unreadable one is named
    before anything is sent), then sends the file as it is: the server converts it again."""
    import pytest

    from kgservice.cli.remote import _payloads
    from kgservice.errors import InputError

    pdf = DATA / "documents" / "rivers.pdf"
    [(path, payload)] = _payloads([pdf], None)
    assert path == pdf and payload == {"file": _b64(pdf), "mode": "summary", "doc": "rivers.pdf"}
    with pytest.raises(InputError, match="encrypted.pdf: the PDF is password-protected"):
        _payloads([pdf, DATA / "documents-bad" / "encrypted.pdf"], None)
