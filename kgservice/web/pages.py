"""The pages: server-rendered Jinja2 (autoescaped), small own scripts under /ui/static (no
inline script: the CSP forbids it). Writes are forms carrying the session's CSRF token."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from kgservice.jobs.model import Job
from kgservice.server.auth import Principal, Role
from kgservice.web.assets import Assets
from kgservice.web.session import COOKIE, cookie_of, csrf_ok

HERE = Path(__file__).parent


def safe_back(value: str, default: str) -> str:
    """``value`` if it is a path of this site's pages (``/ui/...``), else ``default``: a form's
    ``back`` field decides where its POST redirects, and must never send the user elsewhere
    (no scheme, no host, no ``//host`` or ``/\\host``, no ``..``, no control characters)."""
    if not value or any(ord(c) < 32 or c == "\\" for c in value):
        return default
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or not parts.path.startswith("/ui/") or value.startswith("//"):
        return default
    if ".." in parts.path.split("/"):
        return default
    return value


NAV = [("ask", "Ask", Role.reader), ("explore", "Explore", Role.reader), ("documents", "Documents", Role.reader),
       ("jobs", "Jobs", Role.writer), ("admin", "Admin", Role.admin)]


def build_pages(gate: Any, settings: Any, ctx: Any) -> Starlette:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True))
    assets = Assets(HERE / "static")
    env.globals["asset"] = assets.url  # every static URL carries its content hash
    from kgservice.web.words import job_words

    env.filters["job_words"] = job_words
    from kgservice.answer.retrieval_only import no_model_configured

    # nobody chose a model: Ask lists the graph's best units instead of a written answer
    no_model = no_model_configured(settings, settings.llm_model) or not settings.llm_model
    offline = str(settings.llm_model or "").startswith("kgoffline/") and not no_model

    def render(name: str, request: Request, status: int = 200, headers: dict[str, str] | None = None,
               **kw: Any) -> HTMLResponse:
        session, principal = request.scope.get("kg.web", (None, None))
        nav = [(p, t) for p, t, r in NAV if principal is not None and principal.allows(r)]
        html = env.get_template(name).render(principal=principal, csrf=session.csrf if session else "",
                                             nav=nav, page=name.removesuffix(".html"), offline=offline, no_model=no_model,
                                             model=settings.llm_model,
                                             is_writer=principal is not None and principal.allows(Role.writer),
                                             is_admin=principal is not None and principal.allows(Role.admin), **kw)
        return HTMLResponse(html, status_code=status, headers=headers)

    async def who(request: Request):
        session, principal = await gate.principal(request.scope)
        request.scope["kg.web"] = (session, principal)
        return session, principal

    def to_login(request: Request) -> Response:
        """Where a request without a live session goes: the sign-in page, which says the session
        ended when the request still carried a cookie (key revoked, server restarted, expired).
        An htmx request (the Jobs table's refresh) gets ``HX-Redirect`` and no body, so the whole
        page goes to sign-in instead of the sign-in page being swapped into the table."""
        ended = cookie_of(request.scope) is not None
        target = "/ui/login?ended=1" if ended else "/ui/login"
        if request.headers.get("hx-request") == "true":
            resp: Response = Response(status_code=401, headers={"HX-Redirect": target})
        else:
            resp = RedirectResponse(target, status_code=303)
        if ended:
            resp.delete_cookie(COOKIE, path="/")  # said once: a later visit is a plain sign-in
        return resp

    def page(name: str, role: Role, extra: Any = None):
        async def endpoint(request: Request) -> Response:
            session, principal = await who(request)
            if principal is None:
                return to_login(request)
            if not principal.allows(role):
                return render("denied.html", request, status=403, needed=role.value)
            kw = await extra(request, principal) if extra else {}
            if request.method == "GET" and session is not None:  # what the last form did, once
                kw.update(await run_in_threadpool(session.take_flash, request.url.path))
            return render(name, request, **kw)
        return endpoint

    async def home(request: Request) -> Response:
        _, principal = await who(request)
        return RedirectResponse("/ui/ask" if principal else "/ui/login", status_code=303)

    async def login_form(request: Request) -> Response:
        await who(request)
        ended = request.query_params.get("ended") == "1"
        return render("login.html", request, ended=ended)

    async def login(request: Request) -> Response:
        form = await request.form()
        key = str(form.get("key") or "").strip()
        principal = await gate.keys().averify(key) if key else None
        if principal is None:
            request.scope["kg.web"] = (None, None)
            wait = gate.failed_sign_in(request.scope)
            if wait > 0:
                return render("login.html", request, status=429, headers={"retry-after": str(max(1, int(wait + 0.999)))},
                              error="Too many failed sign-ins from this address: wait a little and try again.")
            return render("login.html", request, status=401, error="That key is not valid (or it was revoked).")
        session = await run_in_threadpool(gate.sessions.create, principal.key_id)
        resp = RedirectResponse("/ui/ask", status_code=303)
        resp.set_cookie(COOKIE, session.token, max_age=int(gate.sessions.ttl), httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/")
        return resp

    async def write_check(request: Request, role: Role) -> tuple[Any, Principal | Response, Any]:
        session, principal = await who(request)
        form = await request.form()
        if principal is None:
            return session, to_login(request), form
        if not csrf_ok(session, str(form.get("csrf") or "")):
            return session, render("denied.html", request, status=403, csrf_failed=True), form
        if not principal.allows(role):
            return session, render("denied.html", request, status=403, needed=role.value), form
        return session, principal, form

    async def logout(request: Request) -> Response:
        session, p, _ = await write_check(request, Role.reader)
        if isinstance(p, Response):
            return p
        await run_in_threadpool(gate.sessions.drop, session.token)
        resp = RedirectResponse("/ui/login", status_code=303)
        resp.delete_cookie(COOKIE, path="/")
        return resp

    async def ask_extra(request: Request, principal: Principal) -> dict:
        """The question box's limit is the server's (a longer question would be refused there)."""
        from kgservice.server.models import MAX_QUESTION

        return {"max_question": MAX_QUESTION}

    async def jobs_extra(request: Request, principal: Principal) -> dict:
        from kgservice.server import ops

        found = await run_in_threadpool(ops.list_jobs, ctx.kb, principal, limit=50)
        return {"jobs": [ops.job_dict(j, settings) for j in found], "formats": formats()}

    async def admin_extra(request: Request, principal: Principal) -> dict:
        keys = await run_in_threadpool(gate.keys().list)
        counts = await run_in_threadpool(ctx.kb.store.counts)
        return {"keys": keys, "stats": {"backend": ctx.kb.store.backend, **counts}}

    async def key_create(request: Request) -> Response:
        """Answers with a redirect to /ui/admin, the new key in the session's one-shot flash: the
        secret is shown once, and a reload shows the page instead of creating a second key."""
        session, p, form = await write_check(request, Role.admin)
        if isinstance(p, Response):
            return p
        from kgservice.errors import InputError

        try:
            key, rec = await run_in_threadpool(gate.keys().create, str(form.get("user") or ""),
                                               str(form.get("role") or "reader"))
        except InputError as exc:
            await run_in_threadpool(session.set_flash, "/ui/admin", error=str(exc))
        else:
            await run_in_threadpool(session.set_flash, "/ui/admin",
                                    created={"key": key, "user": rec.user, "role": rec.role.value})
        return RedirectResponse("/ui/admin", status_code=303)

    async def key_revoke(request: Request) -> Response:
        """Revoking needs the confirmation box ticked, and never takes the last active admin key
        (:func:`kgservice.apikeys.model.only_admin`, as the REST route): one click must not lock
        every admin out. Answers with a redirect to the Admin page."""
        from kgservice.apikeys.model import only_admin

        session, p, form = await write_check(request, Role.admin)
        if isinstance(p, Response):
            return p

        async def back(**flash: Any) -> Response:
            await run_in_threadpool(session.set_flash, "/ui/admin", **flash)
            return RedirectResponse("/ui/admin", status_code=303)

        key_id = str(form.get("key_id") or "")
        if form.get("confirm") != "yes":
            return await back(error="Tick the confirmation box first: no key was revoked.")
        keys = gate.keys()
        listed = await run_in_threadpool(keys.list)
        target = next((k for k in listed if k.key_id == key_id), None)
        if target is None:
            return await back(error=f"no API key with id {key_id!r}")
        if only_admin(listed, target):
            return await back(error=f"{key_id} is the only active admin key: create another admin key before "
                              "revoking it (nobody could manage keys from the page or the API afterwards).")
        await run_in_threadpool(keys.revoke, key_id)
        return await back(notice=f"Revoked key {key_id} ({target.user}, {target.role.value}).")

    # -- Documents (the knowledge base's lifecycle methods; writes need the writer role, undo admin)
    def doc_jobs(principal: Principal) -> dict:
        from kgservice.web.documents import job_documents

        return job_documents(ctx.kb.jobs, lambda j: j.user == principal.user or principal.allows(Role.admin))

    def formats() -> list[dict]:
        from kgservice.pipeline.ingest import accepted_formats

        return accepted_formats()

    async def documents_extra(request: Request, principal: Principal) -> dict:
        from kgservice.web.documents import Listing, cited_lines, document_view, list_view

        doc_id = request.query_params.get("doc")
        if doc_id and request.url.path == "/ui/documents":  # the table alone (its refresh) is always the list
            return {"tab": "document", "cited": cited_lines(request.query_params.get("lines", "")),
                    **await run_in_threadpool(document_view, ctx.kb, doc_id)}
        how = Listing.of(request.query_params)

        def listing() -> dict:
            return list_view(ctx.kb.documents(), doc_jobs(principal), how)
        return {"tab": "list", "formats": formats(), **await run_in_threadpool(listing)}

    async def history_extra(request: Request, principal: Principal) -> dict:
        from kgservice.web.documents import history_view

        page_no = request.query_params.get("page", "1")
        changes = await run_in_threadpool(ctx.kb.history)
        return {"tab": "history", **history_view(changes, int(page_no) if page_no.isdigit() else 1)}

    async def lifecycle_write(request: Request, role: Role, action: Any) -> Response:
        """Every Documents write answers with a redirect (303) to the page the form was on, its
        outcome in the session's flash: a reload shows the page again instead of posting again.
        A failed replace keeps the text typed, for the form to show it again."""
        from kgservice.errors import InputError

        session, p, form = await write_check(request, role)
        if isinstance(p, Response):
            return p
        back = safe_back(str(form.get("back") or ""), "/ui/documents")

        async def redirect(**flash: Any) -> Response:
            await run_in_threadpool(session.set_flash, urlsplit(back).path, **flash)
            return RedirectResponse(back, status_code=303)

        kept = {"replace_text": str(form.get("text"))} if form.get("text") else {}
        if form.get("confirm") != "yes":
            return await redirect(error="Tick the confirmation box first: nothing was changed.", **kept)
        try:
            res = await run_in_threadpool(action, form, p)
        except InputError as exc:
            return await redirect(error=str(exc), **kept)
        if isinstance(res, Job):  # replace and forget are jobs, as over REST: the page follows it live
            return await redirect(queued={"job_id": res.id, "kind": res.kind})
        return await redirect(done=res.model_dump(mode="json"))

    def writes(role: Role, action: Any):
        async def endpoint(request: Request) -> Response:
            return await lifecycle_write(request, role, action)
        return endpoint

    def forget_action(form: Any, who: Principal) -> Any:
        from kgservice.server import ops

        return ops.submit_forget(ctx.kb, str(form.get("doc") or ""), who)

    def retract_action(form: Any, who: Principal) -> Any:
        reason = str(form.get("reason") or "").strip()
        from kgservice.errors import InputError

        if not reason:
            raise InputError("reason: say why the unit is retracted (it is kept in the history)")
        return ctx.kb.retract([str(form.get("unit") or "").lstrip("#")], reason, user=who.user)

    def replace_action(form: Any, who: Principal) -> Any:
        from kgservice.errors import InputError
        from kgservice.server import ops

        # a browser sends a textarea's lines with CRLF: the document keeps the line ends it had
        text = str(form.get("text") or "").replace("\r\n", "\n")
        if not text.strip():
            raise InputError("text: the new version of the document is empty")
        seen = str(form.get("version") or "").strip()
        return ops.submit_replace(ctx.kb, str(form.get("doc") or ""), text, who,
                                  version=int(seen) if seen.isdigit() else None)

    def undo_action(form: Any, who: Principal) -> Any:
        return ctx.kb.undo(str(form.get("change") or ""), user=who.user)

    async def provenance(request: Request) -> Response:
        from starlette.responses import JSONResponse

        _, principal = await who(request)
        if principal is None:
            return JSONResponse({"detail": "not signed in"}, status_code=401)
        uid = request.path_params["unit_id"].lstrip("#")
        try:
            found = await run_in_threadpool(ctx.kb.provenance, uid)
        except Exception as exc:  # an unknown unit: no provenance (the unit route says not found)
            return JSONResponse({"detail": str(exc), "sources": []}, status_code=404)
        return JSONResponse({"sources": [p.model_dump(mode="json") for p in found]})

    async def doctor(request: Request) -> Response:
        _, principal = await who(request)
        if principal is None or not principal.allows(Role.admin):
            return render("denied.html", request, status=403, needed="admin")
        from kgservice.admin.doctor import check

        from kgservice.server.disclosure import redact_all

        report = await run_in_threadpool(lambda: check(ctx.kb).to_dict())
        paths = request.query_params.get("paths") == "1"  # absolute server paths: only when the admin asks
        return render("doctor.html", request, report=report if paths else redact_all(report, settings), paths=paths)

    async def api_docs(request: Request) -> Response:
        """The REST reference (Swagger UI, vendored under static/: it works offline), public as
        /openapi.json is."""
        return HTMLResponse(env.get_template("api_docs.html").render())

    routes = [
        Route("/favicon.ico", lambda request: Response(status_code=204)), Route("/", home), Route("/ui", home), Route("/ui/", home),
        Route("/ui/login", login_form, methods=["GET"]), Route("/ui/login", login, methods=["POST"]),
        Route("/ui/logout", logout, methods=["POST"]),
        Route("/ui/ask", page("ask.html", Role.reader, ask_extra)),
        Route("/ui/explore", page("explore.html", Role.reader)),
        Route("/ui/documents", page("documents.html", Role.reader, documents_extra)),
        Route("/ui/documents/table", page("docs_table.html", Role.reader, documents_extra)),
        Route("/ui/documents/history", page("history.html", Role.reader, history_extra)),
        Route("/ui/documents/forget", writes(Role.writer, forget_action), methods=["POST"]),
        Route("/ui/documents/retract", writes(Role.writer, retract_action), methods=["POST"]),
        Route("/ui/documents/replace", writes(Role.writer, replace_action), methods=["POST"]),
        Route("/ui/documents/undo", writes(Role.admin, undo_action), methods=["POST"]),
        Route("/ui/provenance/{unit_id:path}", provenance),
        Route("/ui/jobs", page("jobs.html", Role.writer, jobs_extra)),
        Route("/ui/jobs/list", page("jobs_list.html", Role.writer, jobs_extra)),
        Route("/ui/admin", page("admin.html", Role.admin, admin_extra)),
        Route("/ui/admin/keys", key_create, methods=["POST"]),
        Route("/ui/admin/keys/revoke", key_revoke, methods=["POST"]),
        Route("/ui/admin/doctor", doctor),
        Route("/docs", api_docs),
        Route("/ui/static/{path:path}", assets.serve, methods=["GET", "HEAD"]),
    ]
    return Starlette(routes=routes)
