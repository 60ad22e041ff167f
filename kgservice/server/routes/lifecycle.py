"""Documents and the lifecycle over REST: list / read / replace / delete documents, retract a
unit, the history, undo. Each route is one KnowledgeBase call in a worker thread."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from kgservice.server.deps import ADMIN, READER, WRITER
from kgservice.server.errors import NotFound
from kgservice.server.routes import ctx_of

router = APIRouter(prefix="/v1", tags=["documents"])


class DocumentIn(BaseModel):
    text: str = Field(min_length=1)
    mode: str | None = None  # summary | detail | manual (default: by the id's suffix)
    title: str | None = None


class RetractIn(BaseModel):
    reason: str = Field(min_length=1, max_length=2000)


async def _call(fn: Any, *args: Any, **kw: Any) -> Any:
    from kgservice.errors import InputError

    def run() -> Any:
        try:
            return fn(*args, **kw)
        except InputError as exc:
            if str(exc).startswith("no "):
                raise NotFound(str(exc)) from None
            raise
    return await anyio.to_thread.run_sync(run)


@router.get("/documents", dependencies=[Depends(READER)])
async def list_documents(request: Request) -> list[dict]:
    """Every document (no text)."""
    return [d.model_dump() for d in await _call(ctx_of(request).kb.documents)]


@router.get("/documents/{doc_id:path}", dependencies=[Depends(READER)])
async def get_document(doc_id: str, request: Request) -> dict:
    """One document with its text and the lines of each unit it states."""
    rec = await _call(ctx_of(request).kb.document, doc_id)
    return {**rec.info().model_dump(), "unit_lines": rec.unit_lines, "text": rec.text()}


@router.put("/documents/{doc_id:path}", dependencies=[Depends(WRITER)])
async def put_document(doc_id: str, body: DocumentIn, request: Request) -> dict:
    """The document's new version: its units replace the old version's (the same text: no change)."""
    kb = ctx_of(request).kb
    return (await _call(kb.ingest_document, doc_id, body.text, mode=body.mode, title=body.title)).model_dump()


@router.delete("/documents/{doc_id:path}", dependencies=[Depends(WRITER)])
async def delete_document(doc_id: str, request: Request) -> dict:
    """Forget the document: its units leave the graph unless another document states them."""
    return (await _call(ctx_of(request).kb.forget, [doc_id])).model_dump()


@router.post("/units/{unit_id}/retract", dependencies=[Depends(WRITER)])
async def retract_unit(unit_id: str, body: RetractIn, request: Request) -> dict:
    return (await _call(ctx_of(request).kb.retract, [unit_id], body.reason)).model_dump()


@router.get("/history", dependencies=[Depends(READER)])
async def history(request: Request, target: str | None = None) -> list[dict]:
    """Lifecycle changes, oldest first (``target``: a document or unit id)."""
    return [c.summary() for c in await _call(ctx_of(request).kb.history, target)]


@router.post("/changes/{change_id}/undo", dependencies=[Depends(ADMIN)])
async def undo(change_id: str, request: Request) -> dict:
    return (await _call(ctx_of(request).kb.undo, change_id)).model_dump()
