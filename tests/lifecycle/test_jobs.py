"""The lifecycle through the front doors: `kg ingest` makes documents, uploads and document
writes are jobs checked before they are queued, concurrent replacements of one document never
mix, and answers carry their sources down to the lines."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from kgservice.cli.app import app as cli
from kgservice.config import Settings
from kgservice.jobs.worker import Worker
from kgservice.stores.base import IngestConflict
from kgservice.service import KnowledgeBase


def settings_for(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "kg", embedder="hash:64", local_role="admin", allowed_hosts=("testserver",))


@pytest.fixture
def served(tmp_path: Path):
    from kgservice.server.app import ServeOptions, create_app

    settings = settings_for(tmp_path)
    kb = KnowledgeBase(settings)
    with TestClient(create_app(settings, ServeOptions(kb=kb, no_auth=True))) as c:
        yield c, kb


def finish(client: TestClient, kb: KnowledgeBase, reply) -> dict:
    """Run the job a 202 reply queued (the real worker, in-process); the job as it ended."""
    assert reply.status_code == 202, reply.text
    assert Worker(kb).run_once().id == reply.json()["job_id"]
    return client.get(reply.json()["status_url"]).json()


def live_subjects(kb: KnowledgeBase) -> set[str]:
    return {u.subject for u in kb.store.iter_units()}


# -- kg ingest --------------------------------------------------------------------------------
def kg(tmp_path: Path, *args: str, code: int = 0):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64", *args])
    assert res.exit_code == code, res.output
    return res


def test_kg_ingest_names_documents_by_path_and_replaces_an_edited_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "a").mkdir(parents=True)
    (notes / "b").mkdir()
    (notes / "a" / "coffee.units").write_text("{coffee} [contains] {caffeine}\n", "utf-8")
    (notes / "b" / "coffee.units").write_text("{decaf coffee} [contains] {little caffeine}\n", "utf-8")
    single = tmp_path / "tea.units"
    single.write_text("{tea} [contains] {theine}\n", "utf-8")
    kg(tmp_path, "ingest", str(notes), str(single))
    kg(tmp_path, "ingest", str(single), "--doc-id", "drinks/tea-2.units")
    docs = json.loads(kg(tmp_path, "docs", "list", "--json").stdout)
    # two coffee.units in different folders do not collide; a file alone is its name
    assert sorted(d["id"] for d in docs) == ["a/coffee.units", "b/coffee.units", "drinks/tea-2.units", "tea.units"]
    # the edited file replaces its document's units: the old fact leaves, the other file's stay
    (notes / "a" / "coffee.units").write_text("{coffee} [contains] {chlorogenic acid}\n", "utf-8")
    rep = json.loads(kg(tmp_path, "ingest", str(notes), "--json").stdout)
    assert rep["units_added"] == 1 and rep["units_unchanged"] == 1
    with KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64")) as kb:
        args = {a for u in kb.store.iter_units() for _, a in u.node_args()}
        assert "chlorogenic acid" in args and "caffeine" not in args and "little caffeine" in args
        assert [c.kind for c in kb.history("a/coffee.units")] == ["ingest", "replace"]
    # the same document twice in one call is refused before anything is stored
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "tea.units").write_text("{tea} [is a] {drink}\n", "utf-8")
    r = kg(tmp_path, "ingest", str(single), str(other / "tea.units"), code=2)
    assert "would both be the document 'tea.units'" in " ".join(r.output.split())
    assert "--doc-id names one document" in " ".join(kg(tmp_path, "ingest", str(notes), "--doc-id", "x.units",
                                                          code=2).output.split())


# -- jobs ---------------------------------------------------------------------------------------
def test_a_named_upload_is_a_document_and_the_same_name_replaces_it(served) -> None:
    c, kb = served
    job = finish(c, kb, c.post("/v1/ingest", json={"units": "{cat} [is a] {mammal}\n", "doc": "pets.units"}))
    assert job["status"] == "done" and job["result"]["doc"] == "local/pets.units" and job["result"]["added"] == 1
    job = finish(c, kb, c.post("/v1/ingest", json={"units": "{cat} [is a] {feline}\n", "doc": "pets.units"}))
    assert job["result"]["retracted"] == 1 and job["result"]["kind"] == "replace"
    assert [d["id"] for d in c.get("/v1/documents").json()] == ["local/pets.units"]
    assert {a for u in kb.store.iter_units() for _, a in u.node_args()} == {"feline"}
    # without a name the units are added, as no document (the same text twice: stored once)
    finish(c, kb, c.post("/v1/ingest", json={"units": "{dog} [is a] {mammal}\n"}))
    assert len(c.get("/v1/documents").json()) == 1 and "dog" in live_subjects(kb)


def test_document_writes_are_checked_before_they_are_queued(served) -> None:
    c, kb = served
    r = c.put("/v1/documents/notes/a.units", json={"text": "{cat} [is a]\n"})
    assert r.status_code == 422 and "a.units:1" in r.json()["detail"]
    r = c.put("/v1/documents/../etc.units", json={"text": "{cat} [is a] {mammal}\n"})
    assert r.status_code in (404, 422)
    r = c.delete("/v1/documents/never/was.md")
    assert r.status_code == 404 and "no document 'never/was.md'" in r.json()["detail"]
    assert kb.jobs.list() == []
    finish(c, kb, c.put("/v1/documents/notes/a.units", json={"text": "{cat} [is a] {mammal}\n", "version": 0}))
    # the version the client read must still be the current one
    r = c.put("/v1/documents/notes/a.units", json={"text": "{cat} [is a] {pet}\n", "version": 0})
    assert r.status_code == 409 and "version 1, not 0" in r.json()["detail"]
    job = finish(c, kb, c.put("/v1/documents/notes/a.units", json={"text": "{cat} [is a] {pet}\n", "version": 1}))
    assert job["status"] == "done" and job["kind"] == "replace" and job["result"]["added"] == 1
    assert c.get("/v1/documents/notes/a.units").json()["version"] == 2


def test_two_concurrent_replacements_are_serialised_or_refused_never_mixed(served) -> None:
    c, kb = served
    finish(c, kb, c.put("/v1/documents/team/plan.units", json={"text": "{plan} [has] {step one}\n"}))
    versions = {"A": "{plan} [has] {step alpha}\n{alpha} [is a] {letter}\n",
                "B": "{plan} [has] {step beta}\n{beta} [is a] {letter}\n"}
    replies: dict[str, object] = {}
    go = threading.Barrier(2)

    def put(name: str) -> None:
        go.wait()
        replies[name] = c.put("/v1/documents/team/plan.units", json={"text": versions[name]})

    threads = [threading.Thread(target=put, args=(n,)) for n in versions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queued = [r for r in replies.values() if r.status_code == 202]  # type: ignore[attr-defined]
    assert queued and all(r.status_code in (202, 409) for r in replies.values())  # type: ignore[attr-defined]
    # two workers run them at the same time
    results: list[object] = []
    workers = [threading.Thread(target=lambda: results.append(Worker(kb).run_once())) for _ in queued]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    jobs = [kb.jobs.get(r.json()["job_id"]) for r in queued]  # type: ignore[attr-defined]
    done = [j for j in jobs if j.status == "done"]
    assert len(done) == 1, [(j.status, j.error) for j in jobs]
    assert all("changed since" in (j.error or "") or "changed while" in (j.error or "") for j in jobs
               if j.status != "done")
    # exactly one version's facts are live, and the document states exactly them
    won = next(n for n, t in versions.items() if t == done[0].payload["text"]) if done[0].payload else None
    subjects = live_subjects(kb)
    assert subjects in ({"plan", "alpha"}, {"plan", "beta"}), subjects
    if won is not None:
        assert ("alpha" if won == "A" else "beta") in subjects
    doc = kb.document("team/plan.units")
    assert doc.version == 2 and set(doc.unit_lines) == {u.id for u in kb.store.iter_units()}


def test_concurrent_replacements_in_the_library_serialise_with_a_version_check(tmp_path: Path) -> None:
    with KnowledgeBase(settings_for(tmp_path)) as kb:
        kb.ingest_document("d.units", "{x} [has] {one}\n")
        errors: list[BaseException] = []
        go = threading.Barrier(2)

        def replace(text: str) -> None:
            go.wait()
            try:
                kb.ingest_document("d.units", text, expect_version=1)
            except IngestConflict as exc:
                errors.append(exc)

        ts = [threading.Thread(target=replace, args=(t,)) for t in ("{x} [has] {two}\n", "{x} [has] {three}\n")]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert len(errors) == 1 and "changed since" in str(errors[0])
        args = [a for u in kb.store.iter_units() for _, a in u.node_args()]
        assert args in (["two"], ["three"]) and kb.document("d.units").version == 2
        # the same replacement again (a job re-run after its worker died) is not a conflict
        again = kb.document("d.units").text()
        assert kb.ingest_document("d.units", again, expect_version=1).change is None


# -- provenance in answers -----------------------------------------------------------------------
def test_answers_list_their_sources_down_to_the_lines(served, tmp_path: Path) -> None:
    c, kb = served
    text = "\n{green tea} [contains] {caffeine}\n{caffeine} [causes] {alertness}\n"
    finish(c, kb, c.put("/v1/documents/kitchen/tea.units", json={"text": text}))
    out = c.post("/v1/ask", json={"question": "What does green tea contain?"}).json()
    assert out["found"] and out["sources"], out
    by_unit = {s["unit"]: s for s in out["sources"]}
    assert set(out["cited"]) <= set(by_unit)
    src = next(s for s in out["sources"] if "green tea" in (s["snippet"] or ""))
    assert src["doc"] == "kitchen/tea.units" and src["lines"] == [2, 2] and src["ref"] == "kitchen/tea.units:2"
    unit = c.get(f"/v1/units/{src['unit']}").json()
    assert unit["doc"] == "kitchen/tea.units" and unit["lines"] == [2, 2] and "green tea" in unit["snippet"]


def test_kg_ask_and_mcp_give_the_sources_and_kg_ask_lists_them(tmp_path: Path) -> None:
    from tests.server.test_mcp import call, make, run

    (tmp_path / "kitchen").mkdir()
    (tmp_path / "kitchen" / "tea.units").write_text("{black tea} [contains] {tannin}\n\n{tannin} [tastes] {bitter}\n",
                                                   "utf-8")
    kg(tmp_path, "ingest", str(tmp_path / "kitchen"))
    out = json.loads(kg(tmp_path, "ask", "What does black tea contain?", "--json").stdout)
    src = next(s for s in out["sources"] if s["snippet"] and "black tea" in s["snippet"])
    assert (src["doc"], src["lines"], src["ref"]) == ("tea.units", [1, 1], "tea.units:1")
    text = " ".join(kg(tmp_path, "ask", "What does black tea contain?").stdout.split())
    assert f"sources: tea.units:1 (#{src['unit']})" in text
    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:64")
    with KnowledgeBase(settings) as kb:
        _, mcp = make(settings, kb, "reader")
        got = run(call(mcp, "ask", {"question": "What does black tea contain?"})).structured_content
        assert {(s["doc"], tuple(s["lines"])) for s in got["sources"]} >= {("tea.units", (1, 1))}
        unit = run(call(mcp, "get_unit", {"unit_id": src["unit"]})).structured_content
        assert unit["doc"] == "tea.units" and unit["lines"] == [1, 1] and "tannin" in unit["snippet"]


def test_a_document_job_run_again_after_its_worker_died_changes_nothing(served) -> None:
    from kgservice.jobs.run import run_job

    c, kb = served
    finish(c, kb, c.put("/v1/documents/n.units", json={"text": "{owl} [is a] {bird}\n"}))
    replace = kb.jobs.get(c.put("/v1/documents/n.units", json={"text": "{owl} [is a] {raptor}\n"}).json()["job_id"])
    assert run_job(kb, replace)["added"] == 1
    again = run_job(kb, replace)  # the same job once more: its content is current, no conflict
    assert again["change"] is None and kb.document("n.units").version == 2
    forget = kb.jobs.get(c.delete("/v1/documents/n.units").json()["job_id"])
    assert run_job(kb, forget)["retracted"] == 1
    assert run_job(kb, forget)["change"] is None and kb.documents() == []
