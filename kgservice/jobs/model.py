"""Jobs at the boundary: the pydantic models the server returns, and the payload check.

A payload is checked whole *before* it is queued (docs/SERVICE.md §5.10: never a 202 for work
that cannot run): an unknown kind, a missing field or unit notation that does not parse is
an :class:`InvalidJob` at submit time, naming the field, and nothing is stored.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from kgservice.errors import InputError, ServiceError

JobStatus = Literal["queued", "running", "done", "failed", "cancelled"]
STATUSES = ("queued", "running", "done", "failed", "cancelled")
FINAL = ("done", "failed", "cancelled")
KINDS = ("ingest", "replace", "forget")  # replace / forget: one document's lifecycle change
MAX_PAYLOAD_BYTES = 16 << 20  # a job's payload is stored inline in the graph store
MAX_KEY_CHARS = 200
DOC_NAME = re.compile(r"[^/\\\x00-\x1f]{1,200}\Z")
DOC_ID = re.compile(r"[^\x00-\x1f]{1,1000}\Z")


class InvalidJob(InputError, ValueError):
    """The submitted job cannot run as given (HTTP 422); nothing was queued."""


class IdempotencyConflict(InputError, ValueError):
    """The same user reused an idempotency key for a different payload (HTTP 409)."""

    http_status = 409


class JobNotCancellable(InputError, ValueError):
    """The job has already finished (done, failed or cancelled): nothing to cancel (HTTP 409)."""

    http_status = 409


class JobNotFound(InputError, LookupError):
    """No job with that id (HTTP 404)."""

    http_status = 404


class JobQueueError(ServiceError, RuntimeError):
    """The job store failed (HTTP 503 / exit 1)."""


class Job(BaseModel):
    id: str
    kind: str
    status: JobStatus
    user: str
    created_at: datetime
    updated_at: datetime
    attempts: int = 0
    error: str | None = None
    result: dict[str, Any] | None = None
    # beyond the agreed interface
    max_attempts: int = 3
    owner: str | None = None  # the worker holding (or that last held) the lease
    lease_until: datetime | None = None
    idempotency_key: str | None = None
    input_sha256: str = ""
    cancel_requested: bool = False  # a cancel arrived while the job was running (best effort, see JobQueue.cancel)
    payload: dict[str, Any] | None = Field(default=None, exclude=True)  # the worker needs it; responses do not


class JobEvent(BaseModel):
    seq: int
    job_id: str
    at: datetime
    status: JobStatus
    message: str


def payload_sha256(kind: str, payload: dict[str, Any]) -> str:
    blob = json.dumps([kind, payload], ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def check_submission(kind: str, payload: Any, user: Any, idempotency_key: Any) -> dict[str, Any]:
    """The normalised payload of a valid ingest job, or :class:`InvalidJob` naming the problem."""
    if kind not in KINDS:
        raise InvalidJob(f"kind: unknown job kind {kind!r}; known: {', '.join(KINDS)}")
    if not isinstance(user, str) or not user.strip():
        raise InvalidJob("user: every job records who submitted it; got none")
    if idempotency_key is not None and (not isinstance(idempotency_key, str) or not idempotency_key.strip()
                                        or len(idempotency_key) > MAX_KEY_CHARS):
        raise InvalidJob(f"idempotency_key: must be a non-empty string of at most {MAX_KEY_CHARS} characters")
    if not isinstance(payload, dict):
        raise InvalidJob(f"payload: must be an object, got {type(payload).__name__}")
    if kind in ("replace", "forget"):
        return check_document_payload(kind, payload)
    if "units" in payload:
        extra = set(payload) - {"units", "doc", "document"}
        if extra:
            raise InvalidJob(f"payload: unexpected field(s) {sorted(extra)} next to 'units'")
        if not isinstance(payload["units"], str) or not payload["units"].strip():
            raise InvalidJob("payload.units: must be non-empty unit notation text")
        out: dict[str, Any] = {"units": payload["units"]}
    elif "text" in payload:
        extra = set(payload) - {"text", "mode", "doc", "document"}
        if extra:
            raise InvalidJob(f"payload: unexpected field(s) {sorted(extra)} next to 'text'")
        if not isinstance(payload["text"], str) or not payload["text"].strip():
            raise InvalidJob("payload.text: must be non-empty text")
        mode = payload.get("mode", "summary")
        if mode not in ("summary", "detail"):
            raise InvalidJob(f"payload.mode: must be 'summary' or 'detail', got {mode!r}")
        out = {"text": payload["text"], "mode": mode}
    elif "file" in payload:
        out = check_file_payload(payload)
    else:
        raise InvalidJob("payload: needs 'text' (with 'mode' and 'doc'), 'units' (unit notation) or 'file' (a "
                         "document's bytes, base64, with 'doc' naming it)")
    if "doc" in payload and "document" in payload:
        raise InvalidJob("payload: give 'document' (a document: the same name again replaces it) or 'doc' "
                         "(a source name for appended units), not both")
    doc = payload.get("doc")
    if doc is not None:
        if not isinstance(doc, str) or not DOC_NAME.match(doc) or doc.strip() in ("", ".", ".."):
            raise InvalidJob("payload.doc: a document name (1-200 characters, no '/', '\\' or control characters)")
        out["doc"] = doc
    document = payload.get("document")
    if document is not None:
        if not isinstance(document, str) or not DOC_ID.match(document):
            raise InvalidJob("payload.document: a document id (a relative path of 1-1000 characters, no control "
                             "characters)")
        out["document"] = document
    size = len(json.dumps(out, ensure_ascii=False).encode("utf-8"))
    if size > MAX_PAYLOAD_BYTES:
        raise InvalidJob(f"payload: {size} bytes, over the {MAX_PAYLOAD_BYTES}-byte limit for one job")
    return out


def check_file_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """An uploaded document (PDF, DOCX, PPTX, HTML, XLSX): ``file`` its bytes in base64, the
    name (``doc`` or ``document``) ending in the suffix of its format, optional ``mode``. The
    conversion itself is checked before queueing (:func:`kgservice.jobs.run.validate_payload`)."""
    import base64
    import binascii

    from kgservice.convert import FORMATS, format_of

    extra = set(payload) - {"file", "mode", "doc", "document"}
    if extra:
        raise InvalidJob(f"payload: unexpected field(s) {sorted(extra)} next to 'file'")
    name = payload.get("document") or payload.get("doc")
    if not isinstance(name, str) or format_of(name) is None:
        raise InvalidJob(f"payload.doc: an uploaded file needs its name, ending in one of {', '.join(sorted(FORMATS))} "
                         f"(the format is read from it); got {name!r}")
    data = payload["file"]
    try:
        raw = base64.b64decode(data, validate=True) if isinstance(data, str) else b""
    except (binascii.Error, ValueError):
        raw = b""
    if not raw:
        raise InvalidJob("payload.file: the document's bytes, base64-encoded (non-empty)")
    out: dict[str, Any] = {"file": data}
    mode = payload.get("mode", "summary")
    if mode not in ("summary", "detail"):
        raise InvalidJob(f"payload.mode: must be 'summary' or 'detail', got {mode!r}")
    out["mode"] = mode
    return out


def check_document_payload(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A ``replace`` job: ``doc`` (the document id), ``text`` (its new version: notation for
    mode ``manual``), optional ``mode``, ``title`` and ``version`` (the version it is based on,
    0 for a new document). A ``forget`` job: ``doc``."""
    allowed = {"doc", "text", "mode", "title", "version"} if kind == "replace" else {"doc"}
    extra = set(payload) - allowed
    if extra:
        raise InvalidJob(f"payload: unexpected field(s) {sorted(extra)} in a {kind} job")
    doc = payload.get("doc")
    if not isinstance(doc, str) or not doc.strip() or len(doc) > 1000:
        raise InvalidJob("payload.doc: the document id (a relative path, at most 1000 characters)")
    out: dict[str, Any] = {"doc": doc}
    if kind == "forget":
        return out
    text = payload.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidJob("payload.text: the new version of the document must be non-empty text")
    out["text"] = text
    mode = payload.get("mode")
    if mode is not None and mode not in ("summary", "detail", "manual"):
        raise InvalidJob(f"payload.mode: must be 'summary', 'detail' or 'manual', got {mode!r}")
    title = payload.get("title")
    if title is not None and (not isinstance(title, str) or len(title) > 500):
        raise InvalidJob("payload.title: at most 500 characters of text")
    version = payload.get("version")
    if version is not None and (not isinstance(version, int) or isinstance(version, bool) or version < 0):
        raise InvalidJob(f"payload.version: the version the replacement is based on (0 or more), got {version!r}")
    out.update({k: v for k, v in (("mode", mode), ("title", title), ("version", version)) if v is not None})
    size = len(json.dumps(out, ensure_ascii=False).encode("utf-8"))
    if size > MAX_PAYLOAD_BYTES:
        raise InvalidJob(f"payload: {size} bytes, over the {MAX_PAYLOAD_BYTES}-byte limit for one job")
    return out
