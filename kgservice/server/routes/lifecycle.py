"""Documents and the lifecycle over REST: list / read / replace / delete documents, retract a
unit, the history, undo. Each route is one KnowledgeBase call in a worker thread; replacing and
deleting a document are durable jobs (202 and a job to poll, as POST /v1/ingest), checked
before they are queued."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import quote

import anyio.to_thread
from fastapi import APIRouter, Depends, Header, Request, Response
from pydantic import BaseModel, Field

from kgservice.server import ops
from kgservice.server.auth import Principal
from kgservice.server.deps import ADMIN, READER, WRITER
from kgservice.server.models import JobAccepted
from kgservice.server.errors import NotFound
from kgservice.server.routes import ctx_of

router = APIRouter(prefix="/v1", tags=["documents"])


class DocumentIn(BaseModel):
    text: str = Field(min_length=1)
    mode: Literal["summary", "detail", "manual"] | None = None  # default: by the id's suffix
    title: str | None = Field(None, max_length=500)
    version: int | None = Field(None, ge=0, description="the version this one replaces, as read (0: a new "
                                "document); another current version is a 409")


class RetractIn(BaseModel):
    reason: str = Field(min_length=1, max_length=2000)


async def _call(fn: Any, *args: Any, **kw: Any) -> Any:
    from kgservice.errors import InputError

    def run() -> Any:
        try:
            return fn(*args, **kw)
        except InputError as exc:
            if str(exc).startswith("no ") or "has no original file" in str(exc):
                raise NotFound(str(exc)) from None
            raise
    return await anyio.to_thread.run_sync(run)


def _paths(who: Principal, paths: bool) -> bool:
    """Absolute server paths (a document's ``root``) go only to an admin who asks (``?paths=true``)."""
    from kgservice.server.auth import Role

    return paths and who.allows(Role.admin)


@router.get("/documents")
async def list_documents(request: Request, who: Principal = Depends(READER), paths: bool = False) -> list[dict]:
    """Every document (no text). `root`, the server folder `kg sync` mirrors it from, is null
    unless an admin asks for it with `?paths=true`."""
    from kgservice.server.disclosure import document_fields

    show = _paths(who, paths)
    return [document_fields(d.model_dump(), show_paths=show) for d in await _call(ctx_of(request).kb.documents)]


@router.get("/documents/{doc_id:path}")
async def get_document(doc_id: str, request: Request, who: Principal = Depends(READER), paths: bool = False) -> dict:
    """One document with its text and the lines of each unit it states (`root` as in the listing)."""
    from kgservice.server.disclosure import document_fields

    rec = await _call(ctx_of(request).kb.document, doc_id)
    return document_fields(rec.view(), show_paths=_paths(who, paths))


@router.get("/originals/{doc_id:path}", dependencies=[Depends(READER)], response_class=Response,
            responses={200: {"content": {"application/pdf": {}}, "description": "the file as it was uploaded"}})
async def get_original(doc_id: str, request: Request) -> Response:
    """The file a converted document (PDF, DOCX, PPTX, HTML, XLSX) was ingested from, as given,
    with its media type (a PDF opens at a page with `#page=N`); 404 when none is kept."""
    orig = await _call(ctx_of(request).kb.original, doc_id)
    # a PDF opens in the browser (at #page=N); an uploaded web page is only ever a download, sandboxed:
    # it is someone's file, and shown inline it would run on this site's origin
    inline = orig.media_type == "application/pdf"
    headers = {"Content-Disposition": f"{'inline' if inline else 'attachment'}; filename*=UTF-8''{quote(orig.name)}",
               "X-Content-Type-Options": "nosniff"}
    if not inline:
        headers["Content-Security-Policy"] = "sandbox"
    return Response(orig.data, media_type=orig.media_type, headers=headers)


@router.put("/documents/{doc_id:path}", status_code=202, response_model=JobAccepted)
async def put_document(doc_id: str, body: DocumentIn, request: Request, who: Principal = Depends(WRITER),
                       idempotency_key: Annotated[str | None, Header(max_length=200)] = None) -> JobAccepted:
    """Queue the document's new version (a `replace` job: poll it like an ingest job): its units
    replace the old version's; the same text changes nothing. Checked before queueing (422);
    `version` other than the current one is a 409, and so is a replacement that finds the
    document replaced by another one meanwhile (the job fails naming the conflict)."""
    kb = ctx_of(request).kb
    job = await _call(ops.submit_replace, kb, doc_id, body.text, who, mode=body.mode, title=body.title,
                      version=body.version, idempotency_key=idempotency_key)
    return ops.job_accepted(job, who)


@router.delete("/documents/{doc_id:path}", status_code=202, response_model=JobAccepted)
async def delete_document(doc_id: str, request: Request, who: Principal = Depends(WRITER),
                          idempotency_key: Annotated[str | None, Header(max_length=200)] = None) -> JobAccepted:
    """Queue forgetting the document (a `forget` job): its units leave the graph unless another
    document states them. An unknown document is a 404 naming it."""
    job = await _call(ops.submit_forget, ctx_of(request).kb, doc_id, who, idempotency_key=idempotency_key)
    return ops.job_accepted(job, who)


@router.post("/units/{unit_id}/retract")
async def retract_unit(unit_id: str, body: RetractIn, request: Request, who: Principal = Depends(WRITER)) -> dict:
    """Retract a unit, credited in the history to the caller (not the server's process user)."""
    return (await _call(ctx_of(request).kb.retract, [unit_id], body.reason, user=who.user)).model_dump()


@router.get("/history", dependencies=[Depends(READER)])
async def history(request: Request, target: str | None = None) -> list[dict]:
    """Lifecycle changes, oldest first (``target``: a document or unit id)."""
    return [c.summary() for c in await _call(ctx_of(request).kb.history, target)]


@router.post("/changes/{change_id}/undo")
async def undo(change_id: str, request: Request, who: Principal = Depends(ADMIN)) -> dict:
    """Undo a change, credited in the history to the caller (not the server's process user)."""
    return (await _call(ctx_of(request).kb.undo, change_id, user=who.user)).model_dump()
