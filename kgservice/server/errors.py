"""HTTP errors with stable status codes, from the two error roots of :mod:`kgservice.errors`.

401 no or bad key · 403 role (or a read-only server) · 404 unknown unit / node / job ·
409 conflict (idempotency key reused for another request, unit id reused for another fact) ·
413 body too large · 422 bad input (names the field) · 429 rate limit (with Retry-After) ·
503 a backend is down · 507 the server's disk is full (a write refused; reads keep working).
A library error may carry ``http_status`` to pick one of these.
Only the two roots are mapped (and the framework's own errors); anything else is a bug and gets
500 in the same envelope.
"""

from __future__ import annotations

import errno
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from kgservice.errors import InputError, ServiceError

STABLE = (401, 403, 404, 409, 413, 422, 429, 503, 507)
FULL_DISK = (errno.ENOSPC, errno.EDQUOT)


class NotFound(InputError, LookupError):
    http_status = 404


class Conflict(InputError):
    http_status = 409


class Forbidden(InputError, PermissionError):
    http_status = 403


def status_of(exc: BaseException) -> int:
    explicit = getattr(exc, "http_status", None)
    if isinstance(explicit, int) and explicit in STABLE:
        return explicit
    from kgservice.errors import ReadOnlyError

    if isinstance(exc, ReadOnlyError):
        return 403
    if isinstance(exc, InputError):
        return 422
    if isinstance(exc, ServiceError):
        # a full disk: the write is refused (reads keep working); 507 says it is the server's storage
        return 507 if getattr(exc, "errno", None) in FULL_DISK else 503
    return 500  # not one of ours: a bug


def error_body(status: int, message: str, **extra: Any) -> dict[str, Any]:
    """The one error envelope: ``detail``, ``status`` and, inside a request, its ``request_id``
    (the ``X-Request-ID`` of the reply: what to quote when asking about a failure)."""
    from kgservice.server.request_ids import current

    rid = current()
    return {"detail": message, "status": status, **extra, **({"request_id": rid} if rid else {})}


def _fields(errors: list[dict[str, Any]]) -> str:
    parts = []
    for e in errors:
        loc = ".".join(str(p) for p in e.get("loc", ()))
        parts.append(f"{loc}: {e.get('msg', 'invalid')}")
    return "; ".join(parts)


def body_problem(exc: BaseException) -> str | None:
    """What made a request body unreadable, for the cases the framework reports only as "an
    error parsing the body" (its cause): nesting too deep for the JSON parser, bytes that
    are not UTF-8. None for anything else."""
    cause = exc.__cause__
    if isinstance(cause, RecursionError):
        return "request body: the JSON is nested too deeply to parse; send at most a few hundred levels"
    if isinstance(cause, UnicodeDecodeError):
        return (f"request body: not valid UTF-8 (byte 0x{cause.object[cause.start]:02x} at offset {cause.start}); "
                "JSON bodies must be UTF-8")
    return None


def json_problem(exc: RequestValidationError) -> str | None:
    """The body is not valid JSON: what the parser expected and where, as line, column and
    character offset. The framework reports it as a field error at ``body.<offset>``
    ("body.9: JSON decode error"), which reads like a field named 9 and names no line. None
    when the body parsed."""
    for e in exc.errors():
        if e.get("type") != "json_invalid":
            continue
        loc = tuple(e.get("loc", ()))
        pos = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else None
        why = str((e.get("ctx") or {}).get("error") or "it does not parse")
        doc = exc.body.decode("utf-8", "replace") if isinstance(exc.body, bytes) else exc.body
        if pos is None or not isinstance(doc, str):
            return f"request body: not valid JSON ({why})"
        line = doc.count("\n", 0, pos) + 1
        column = pos - doc.rfind("\n", 0, pos)  # 1-based, as Python's json module counts
        return f"request body: not valid JSON: {why} at line {line}, column {column} (character offset {pos})"
    return None


def install(app: FastAPI) -> None:
    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """Every framework-raised error (a role refusal, an unparseable body, an unknown
        path) in the same envelope as the rest, ``status`` included."""
        status, detail = exc.status_code, exc.detail
        if status == 400:
            why = body_problem(exc)
            if why is not None:
                status, detail = 422, why
        return JSONResponse(error_body(status, str(detail)), status_code=status, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        bad_json = json_problem(exc)
        if bad_json is not None:
            errors = [{"type": "json_invalid", "loc": ["body"], "msg": bad_json}]
            return JSONResponse(error_body(422, bad_json, errors=errors), status_code=422)
        errors = [{k: v for k, v in e.items() if k in ("type", "loc", "msg")} for e in exc.errors()]
        return JSONResponse(error_body(422, f"invalid request: {_fields(errors)}", errors=errors), status_code=422)

    def said(request: Request, text: str) -> str:
        """The message as the client may see it: no absolute server path (kgservice.server.disclosure)."""
        from kgservice.server.disclosure import redact

        ctx = getattr(request.app.state, "ctx", None)  # an app without a knowledge base knows no paths
        return text if ctx is None else redact(text, ctx.settings)

    @app.exception_handler(InputError)
    async def _input(request: Request, exc: InputError) -> JSONResponse:
        status = status_of(exc)
        return JSONResponse(error_body(status, said(request, str(exc))), status_code=status)

    @app.exception_handler(ServiceError)
    async def _service(request: Request, exc: ServiceError) -> JSONResponse:
        status = status_of(exc)
        return JSONResponse(error_body(status, said(request, str(exc))), status_code=status,
                            headers={"Retry-After": "5"} if status == 503 else None)

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        """Anything else escaped the library: a bug. The same envelope, one line, no traceback in
        the reply (the server's log has it)."""
        return JSONResponse(error_body(500, said(request, f"internal error ({type(exc).__name__}: {exc})")),
                            status_code=500)
