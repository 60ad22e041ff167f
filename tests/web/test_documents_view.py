"""The Documents list's query, paging, sorting and status column as pure functions (no server):
expectations worked out by hand from the five documents below."""

from __future__ import annotations

from types import SimpleNamespace

from kgservice.web.documents import Listing, list_view, status_of


def doc(i: str, title: str, units: int, when: str) -> SimpleNamespace:
    return SimpleNamespace(id=i, title=title, version=1, units=units, mode="manual", when=when, who="ann")


DOCS = [doc("b.units", "Beta", 3, "2026-01-02T00:00:00+00:00"), doc("a.units", "Alpha", 7, "2026-01-05T00:00:00+00:00"),
        doc("e.md", "Echo", 1, "2026-01-01T00:00:00+00:00"), doc("c.units", "Charlie", 7, "2026-01-03T00:00:00+00:00"),
        doc("d.txt", "Delta notes", 2, "2026-01-04T00:00:00+00:00")]


def job(status: str, at: str, mine: bool = True, kind: str = "replace") -> dict:
    return {"status": status, "kind": kind, "job_id": "j", "at": at, "mine": mine, "error": "boom" if status == "failed" else None}


def ids(view: dict) -> list[str]:
    return [r["id"] for r in view["rows"]]


def test_bad_query_values_fall_back_to_the_defaults():
    how = Listing.of({"sort": "drop table", "page": "-3", "per": "0", "dir": "sideways", "q": "  x "})
    assert (how.sort, how.desc, how.page, how.per, how.q) == ("id", False, 1, 50, "x")
    assert Listing.of({"per": "100000"}).per == 500
    assert Listing(q="a b", sort="units", desc=True, page=2, per=2).query() == "q=a+b&sort=units&dir=desc&page=2&per=2"
    assert Listing().query() == ""


def test_pages_sorts_and_searches():
    by_units = list_view(DOCS, {}, Listing(sort="units", desc=True, page=1, per=2))
    assert ids(by_units) == ["c.units", "a.units"]  # 7, 7: ties by id, the whole order reversed
    assert (by_units["pages"], by_units["matching"], by_units["first"], by_units["last"]) == (3, 5, 1, 2)
    page3 = list_view(DOCS, {}, Listing(sort="units", desc=True, page=3, per=2))
    assert ids(page3) == ["e.md"] and (page3["first"], page3["last"]) == (5, 5)
    beyond = list_view(DOCS, {}, Listing(page=9, per=2))
    assert beyond["page_no"] == 3 and ids(beyond) == ["e.md"]  # past the end: the last page
    assert ids(list_view(DOCS, {}, Listing(sort="when"))) == ["e.md", "b.units", "c.units", "d.txt", "a.units"]
    found = list_view(DOCS, {}, Listing(q="NOTES"))  # the title, any case
    assert ids(found) == ["d.txt"] and (found["matching"], found["total"]) == (1, 5)


def test_status_comes_from_the_newest_job_naming_the_document():
    d = DOCS[0]  # stored 2026-01-02
    assert status_of(d, None) == "ready"
    assert status_of(d, job("running", "2026-01-01T00:00:00+00:00")) == "running"
    assert status_of(d, job("failed", "2026-01-03T00:00:00+00:00")) == "failed"  # after the version shown
    assert status_of(d, job("failed", "2026-01-01T00:00:00+00:00")) == "ready"  # an older failure
    assert status_of(d, job("done", "2026-01-03T00:00:00+00:00")) == "ready"


def test_uploads_not_stored_yet_are_listed_to_their_own_user():
    jobs = {"ann/new.units": job("queued", "2026-01-06T00:00:00+00:00", kind="ingest"),
            "bob/secret.md": job("failed", "2026-01-06T00:00:00+00:00", mine=False, kind="ingest"),
            "b.units": job("running", "2026-01-06T00:00:00+00:00")}
    view = list_view(DOCS, jobs, Listing(sort="status"))
    assert {r["id"]: r["status"] for r in view["rows"]} == {
        "ann/new.units": "queued", "b.units": "running", "a.units": "ready", "c.units": "ready", "d.txt": "ready",
        "e.md": "ready"}
    assert view["pending"] == 2 and view["total"] == 6
