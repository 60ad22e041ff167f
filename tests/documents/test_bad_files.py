"""Files that cannot be read as the document their name says: each is refused with its name,
what is wrong and what to do, exit 2 / HTTP 422, and nothing is stored (also not the good
files given with it). The files are in tests/data/documents-bad (made by
tests/data/documents-src/make.py with qpdf, pdftoppm and LibreOffice)."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from kgservice.config import Settings
from kgservice.convert import UnreadableDocument, convert
from kgservice.errors import InputError
from kgservice.service import KnowledgeBase
from tests.processes import env_for, kg

DATA = Path(__file__).resolve().parents[1] / "data"
GOOD = DATA / "documents"
BAD = DATA / "documents-bad"

# file -> what the message must say (the problem, and the fix), worked out from how each was made
CASES = {
    "encrypted.pdf": ["encrypted.pdf", "password-protected", "qpdf --decrypt"],
    "scanned.pdf": ["scanned.pdf", "no text layer", "1 of its 1 page(s) are images", "ocrmypdf"],
    "truncated.docx": ["truncated.docx", "damaged", "incomplete", "export it again"],
    "not-a-deck.pptx": ["not-a-deck.pptx", "the file is a Word document (DOCX)", "rename it to not-a-deck.docx"],
    "minutes.pdf": ["minutes.pdf", "the file is a web page (HTML)", "rename it to minutes.html"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_bad_file_is_named_with_its_fix(name: str):
    with pytest.raises(UnreadableDocument) as err:
        convert((BAD / name).read_bytes(), name)
    for part in CASES[name]:
        assert part in str(err.value)
    assert isinstance(err.value, InputError)  # exit 2 / HTTP 422


def test_a_pdf_cut_short_and_an_empty_file():
    data = (GOOD / "rivers.pdf").read_bytes()
    with pytest.raises(UnreadableDocument, match=r"half\.pdf: the PDF is damaged .* save or export it again"):
        convert(data[: len(data) // 2], "half.pdf")
    with pytest.raises(UnreadableDocument, match="empty.docx: the file is empty"):
        convert(b"", "empty.docx")


@pytest.mark.parametrize("name", sorted(CASES))
def test_library_ingest_stores_nothing(tmp_path: Path, name: str):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(GOOD / "rivers.pdf", folder / "a-good.pdf")  # sorted first: read, then refused with the bad one
    shutil.copy(BAD / name, folder / name)
    with KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64", llm_model="kgoffline/rules")) as kb:
        with pytest.raises(InputError, match=name.replace(".", r"\.")):
            kb.ingest_paths([folder])
        assert kb.documents() == [] and kb.stats()["units"] == 0
        with pytest.raises(InputError, match=name.replace(".", r"\.")):
            kb.sync(folder)
        assert kb.documents() == [] and kb.stats()["units"] == 0


def test_cli_ingest_and_sync_exit_2_and_store_nothing(tmp_path: Path):
    folder = tmp_path / "team"
    folder.mkdir()
    shutil.copy(GOOD / "airports.docx", folder / "airports.docx")
    shutil.copy(BAD / "encrypted.pdf", folder / "report.pdf")
    env = env_for(tmp_path / "kg")
    r = kg(env, "ingest", str(folder / "airports.docx"), str(folder / "report.pdf"))
    assert r.returncode == 2, r.stderr
    assert "report.pdf: the PDF is password-protected" in r.stderr and "Traceback" not in r.stderr
    r = kg(env, "sync", str(folder))
    assert r.returncode == 2 and "report.pdf" in r.stderr and "password-protected" in r.stderr, r.stderr
    r = kg(env, "docs", "list", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == []


def test_rest_refuses_before_queueing(client, keys, kb):
    from tests.server.conftest import auth

    w = auth(keys["writer"])
    body = {"file": base64.b64encode((BAD / "scanned.pdf").read_bytes()).decode(), "doc": "scan.pdf"}
    r = client.post("/v1/ingest", json=body, headers=w)
    assert r.status_code == 422, r.text
    assert "scan.pdf: the PDF has no text layer" in r.text and "ocrmypdf" in r.text
    assert kb.jobs.list(user="user-writer") == []
    r = client.post("/v1/ingest", json={"file": "bm90IGJhc2U2NA==", "doc": "notes.txt"}, headers=w)
    assert r.status_code == 422 and "names the uploaded file" in r.text
