"""What the Documents pages show, from the knowledge base's own calls (``kb.documents``,
``kb.document``, ``kb.history``) and the job queue: one page of the list (search, sort, paging)
with each document's status, one document with its text, and one page of the history.

A document's *status* comes from the jobs that name it: ``queued`` / ``running`` while an upload,
a replacement or a forget of it waits or runs, ``failed`` when the latest such job failed (after
the version shown), else ``ready``. An upload not stored yet is listed too, by its job, so a new
file shows up the moment it is queued (to its own user and admins: to others its name is not
known until it is stored). Pure functions of their inputs (the page's routes run them
in a worker thread).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

PER_PAGE = 50
SORTS = ("id", "title", "status", "version", "units", "when")
PENDING = ("queued", "running")


@dataclass(frozen=True)
class Listing:
    """The list's query, as read from the URL (bad values fall back to the defaults)."""

    q: str = ""
    sort: str = "id"
    desc: bool = False
    page: int = 1
    per: int = PER_PAGE

    @classmethod
    def of(cls, params: Any) -> "Listing":
        sort = params.get("sort", "id")
        page = params.get("page", "1")
        per = params.get("per", str(PER_PAGE))
        return cls(q=params.get("q", "").strip(), sort=sort if sort in SORTS else "id",
                   desc=params.get("dir") == "desc",
                   page=int(page) if page.isdigit() and int(page) > 0 else 1,
                   per=min(int(per), 500) if per.isdigit() and int(per) > 0 else PER_PAGE)

    def query(self, **change: Any) -> str:
        """This listing's URL query with ``change`` applied (a sort link, a page link)."""
        from urllib.parse import urlencode

        d = {"q": self.q, "sort": self.sort, "dir": "desc" if self.desc else "asc", "page": self.page,
             "per": self.per, **change}
        keep = {k: v for k, v in d.items() if v not in ("", None) and not (k == "per" and v == PER_PAGE)
                and not (k == "page" and v == 1) and not (k == "sort" and v == "id")
                and not (k == "dir" and v == "asc")}
        return urlencode(keep)


def job_documents(jobs: Any, visible_to: Any) -> dict[str, dict[str, Any]]:
    """doc id -> the newest job naming it, as {status, kind, job_id, at, mine (``visible_to``: the
    viewer's own, or an admin), error (only when mine)}: the pending jobs and the last 200 finished. A job's payload names its
    document (an upload's ``document``, a replacement's or forget's ``doc``); a finished job's
    result does too."""
    found: dict[str, dict[str, Any]] = {}
    listed = [*jobs.list(status="queued", limit=1000), *jobs.list(status="running", limit=1000),
              *jobs.list(limit=200)]
    for job in sorted({j.id: j for j in listed}.values(), key=lambda j: j.created_at):
        doc = (job.result or {}).get("doc")
        if doc is None and job.status in (*PENDING, "failed"):
            full = jobs.get(job.id)
            payload = (full.payload if full is not None else None) or {}
            doc = payload.get("document") or payload.get("doc")
        if doc is None or job.kind not in ("ingest", "replace", "forget"):
            continue
        mine = visible_to(job)
        found[doc] = {"status": getattr(job.status, "value", str(job.status)), "kind": job.kind,
                      "job_id": job.id, "at": job.updated_at.isoformat(timespec="seconds"), "mine": mine,
                      "error": job.error if mine else ("failed" if job.error else None)}
    return found


def status_of(doc: Any, job: dict[str, Any] | None) -> str:
    if job is None:
        return "ready"
    if job["status"] in PENDING:
        return job["status"]
    if job["status"] == "failed" and (doc is None or job["at"][:19] >= str(doc.when)[:19]):
        return "failed"
    return "ready" if doc is not None else job["status"]


def list_view(docs: list[Any], jobs: dict[str, dict[str, Any]], how: Listing) -> dict[str, Any]:
    """One page of the documents list: rows (stored documents and uploads not stored yet), the
    count matching the search, the total, the pages and how many are pending."""
    rows = [{"id": d.id, "title": d.title, "version": d.version, "units": d.units, "mode": d.mode,
             "when": d.when, "who": d.who, "status": status_of(d, jobs.get(d.id)), "job": jobs.get(d.id)}
            for d in docs]
    stored = {d.id for d in docs}
    for doc, job in jobs.items():  # your uploads queued, running or failed before their first version
        if doc not in stored and job["kind"] == "ingest" and job["status"] in (*PENDING, "failed") and job["mine"]:
            rows.append({"id": doc, "title": "", "version": 0, "units": 0, "mode": "", "when": job["at"],
                         "who": None, "status": job["status"], "job": job})
    q = how.q.lower()
    shown = [r for r in rows if not q or q in r["id"].lower() or q in (r["title"] or "").lower()]
    order = {"status": lambda r: (r["status"], r["id"])}.get(how.sort, lambda r: (r[how.sort] or "", r["id"]))
    shown.sort(key=order, reverse=how.desc)
    pages = max(1, math.ceil(len(shown) / how.per))
    page = min(how.page, pages)
    start = (page - 1) * how.per
    return {"rows": shown[start:start + how.per], "matching": len(shown), "total": len(rows),
            "first": start + 1 if shown else 0, "last": min(start + how.per, len(shown)), "page_no": page,
            "pages": pages, "pending": sum(r["status"] in PENDING for r in rows), "listing": how}


def history_view(changes: list[Any], page: int, per: int = PER_PAGE) -> dict[str, Any]:
    """One page of the lifecycle history, newest first."""
    newest = [c.summary() for c in reversed(changes)]
    pages = max(1, math.ceil(len(newest) / per))
    page = min(max(page, 1), pages)
    return {"history": newest[(page - 1) * per:page * per], "page_no": page, "pages": pages, "changes": len(newest)}


def document_view(kb: Any, doc_id: str) -> dict[str, Any]:
    """One document: its text with the units each line states, its history, and the replace
    box's starting text (the current text). A document that is gone says how it went (the last
    change naming it) instead of offering to change it."""
    from kgservice.errors import InputError
    from kgservice.lifecycle.model import text_rows
    from kgservice.notation import format_unit

    try:
        history = [c.summary() for c in kb.history(doc_id)][::-1]
    except InputError:  # no document and no change ever named it (a mistyped or made-up ?doc=)
        history = []
    try:
        rec = kb.document(doc_id)
    except InputError as exc:
        gone = next((c for c in history if c["kind"] == "forget"), None)
        return {"doc_error": None if gone else str(exc), "gone": gone, "gone_id": doc_id, "history": history}
    text = rec.text()
    by_line: dict[int, list[dict]] = {}
    unplaced = []
    for uid, lines in rec.unit_lines.items():
        found = kb.unit(uid)
        row = {"id": uid, "notation": format_unit(found.unit) if found else f"#{uid}", "lines": lines}
        if lines:
            by_line.setdefault(lines[0], []).append(row)
        else:
            unplaced.append(row)
    rows = [] if text is None else text_rows(text)
    return {"doc": rec.info(), "lines": [(i, line, by_line.get(i, [])) for i, line in enumerate(rows, 1)],
            "unplaced": unplaced, "has_text": text is not None, "text": text or "", "history": history,
            **paging(rec, rows)}


def paging(rec: Any, rows: list[str]) -> dict[str, Any]:
    """A converted document's pages for the view: the line each page (slide, sheet) starts at,
    and each line's number within its page as a citation's location counts it (blank lines are
    not counted, and show none: :func:`kgservice.lifecycle.place.page_of`)."""
    from kgservice.convert import page_word

    word = page_word(rec.format)
    if not (word and rec.pages):
        return {"page_word": None, "page_at": {}, "page_line": {}}
    at: dict[int, int] = {}
    for i, start in enumerate(rec.pages, 1):
        at[start] = i  # an empty page starts where the next one does: the later number wins
    starts, line_no, count = set(rec.pages), {}, 0
    for i, row in enumerate(rows, 1):  # one pass: what page_of counts, for every line
        count = 0 if i in starts else count
        count += 1 if row.strip() else 0
        line_no[i] = count if row.strip() else ""
    return {"page_word": word, "page_at": at, "page_line": line_no}


def cited_lines(value: str) -> tuple[int, int] | None:
    """``?lines=12-14`` (a citation's lines, as the Ask page links them), to highlight; else None.

    >>> cited_lines("12-14"), cited_lines("7"), cited_lines("x")
    ((12, 14), (7, 7), None)
    """
    m = re.fullmatch(r"(\d{1,7})(?:-(\d{1,7}))?", value.strip())
    return (int(m.group(1)), int(m.group(2) or m.group(1))) if m else None
