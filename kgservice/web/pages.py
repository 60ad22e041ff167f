"""The pages: server-rendered Jinja2 (autoescaped), small own scripts under /ui/static (no
inline script: the CSP forbids it). Writes are forms carrying the session's CSRF token.

Each route is a module-level handler ``handler(site, request)``, listed once in :data:`ROUTES`
(path, handler, methods); :func:`build_pages` binds them to one :class:`Site` (the gate, the
settings, the server context, the templates). A page a role may read is a :class:`Page` (its
template, role and the extra values it shows), a Documents write a :class:`Write` (role, action).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
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
from kgservice.config import check_workspace_name
from kgservice.errors import ConfigError
from kgservice.server.auth import Principal, Role
from kgservice.server.middleware import NAMED, PREFIX
from kgservice.web.assets import Assets
from kgservice.web.session import COOKIE, cookie_of, csrf_ok

HERE = Path(__file__).parent


def base_of(request: Request) -> str:
    """``/w/<name>`` when the request came in under a workspace's prefix, else "": every link,
    form, script request and redirect of the page is this plus ``/ui/...``, so a user who opened
    the page under a workspace's path stays in it (the prefix is taken off before the routes:
    :class:`kgservice.server.middleware.WorkspacePrefix`). A name no workspace could have gives ""."""
    name = request.scope.get(NAMED)
    if not name:
        return ""
    try:
        check_workspace_name(name)
    except ConfigError:  # its only refusal; anything else is a bug, not a name to drop
        return ""
    return PREFIX + name


def safe_back(value: str, default: str, base: str = "") -> str:
    """``value`` if it is a path of this site's pages (``<base>/ui/...``: ``base`` is the request's
    workspace prefix, :func:`base_of`), else ``default``: a form's ``back`` field decides where
    its POST redirects, and must never send the user elsewhere, nor out of the workspace the
    page is in (no scheme, no host, no ``//host`` or ``/\\host``, no ``..``, no control characters)."""
    if not value or any(ord(c) < 32 or c == "\\" for c in value):
        return default
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or not parts.path.startswith(base + "/ui/") or value.startswith("//"):
        return default
    if ".." in parts.path.split("/"):
        return default
    return value


NAV = [("ask", "Ask", Role.reader), ("explore", "Explore", Role.reader), ("documents", "Documents", Role.reader),
       ("jobs", "Jobs", Role.writer), ("admin", "Admin", Role.admin)]


@dataclass
class Site:
    """What every handler reads: the gate (sessions, keys, sign-in limits), the settings, the
    server context (its knowledge base), the templates and the static files."""

    gate: Any
    settings: Any
    root: Any  # the server's context (the deployment's); ``ctx`` is the request's workspace's
    env: Environment
    assets: Assets
    no_model: bool  # nobody chose a model: Ask lists the graph's best units instead of a written answer
    offline: bool

    @classmethod
    def build(cls, gate: Any, settings: Any, ctx: Any) -> Site:
        from kgservice.llm.check import no_model_configured
        from kgservice.web.words import job_words

        env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True))
        assets = Assets(HERE / "static")
        env.globals["asset"] = assets.url  # every static URL carries its content hash
        env.filters["job_words"] = job_words
        no_model = no_model_configured(settings, settings.llm_model) or not settings.llm_model
        offline = str(settings.llm_model or "").startswith("kgoffline/") and not no_model
        return cls(gate, settings, ctx, env, assets, no_model, offline)

    @property
    def ctx(self) -> Any:
        """The context of the workspace this page request acts in (the gate chose it:
        :data:`kgservice.web.gate.CURRENT`), so every page reads and writes that workspace only."""
        from kgservice.web.current import CURRENT

        name = CURRENT.get()
        return self.root.for_workspace(name) if name else self.root

    def render(self, name: str, request: Request, status: int = 200, headers: dict[str, str] | None = None,
               **kw: Any) -> HTMLResponse:
        session, principal = request.scope.get("kg.web", (None, None))
        nav = [(p, t) for p, t, r in NAV if principal is not None and principal.allows(r)]
        from kgservice.web.current import CURRENT

        spaces = sorted(principal.workspaces or {}, key=lambda w: (w != "default", w)) if principal else []
        base = base_of(request)
        html = self.env.get_template(name).render(
            base=base, asset=lambda path: base + self.assets.url(path),
            workspace=CURRENT.get(), workspaces=spaces if len(spaces) > 1 else [],
            principal=principal, csrf=session.csrf if session else "", nav=nav, page=name.removesuffix(".html"),
            offline=self.offline, no_model=self.no_model, model=self.settings.llm_model,
            is_writer=principal is not None and principal.allows(Role.writer),
            is_admin=principal is not None and principal.allows(Role.admin), **kw)
        return HTMLResponse(html, status_code=status, headers=headers)


Handler = Callable[[Site, Request], Awaitable[Response]]
Extra = Callable[[Site, Request, Principal], Awaitable[dict[str, Any]]]
Action = Callable[[Site, Any, Principal], Any]  # (site, form, who) -> a Job or a pydantic result


async def who(site: Site, request: Request) -> tuple[Any, Principal | None]:
    session, principal = await site.gate.principal(request.scope)
    request.scope["kg.web"] = (session, principal)
    return session, principal


def to_login(request: Request) -> Response:
    """Where a request without a live session goes: the sign-in page, which says the session
    ended when the request still carried a cookie (key revoked, server restarted, expired).
    An htmx request (the Jobs table's refresh) gets ``HX-Redirect`` and no body, so the whole
    page goes to sign-in instead of the sign-in page being swapped into the table."""
    ended = cookie_of(request.scope) is not None
    target = base_of(request) + ("/ui/login?ended=1" if ended else "/ui/login")
    if request.headers.get("hx-request") == "true":
        resp: Response = Response(status_code=401, headers={"HX-Redirect": target})
    else:
        resp = RedirectResponse(target, status_code=303)
    if ended:
        resp.delete_cookie(COOKIE, path="/")  # said once: a later visit is a plain sign-in
    return resp


async def write_check(site: Site, request: Request, role: Role) -> tuple[Any, Principal | Response, Any]:
    """(session, principal or the refusal to answer with, form) of a form POST: signed in, the
    session's CSRF token, the role."""
    session, principal = await who(site, request)
    form = await request.form()
    if principal is None:
        return session, to_login(request), form
    if not csrf_ok(session, str(form.get("csrf") or "")):
        return session, site.render("denied.html", request, status=403, csrf_failed=True), form
    if not principal.allows(role):
        return session, site.render("denied.html", request, status=403, needed=role.value), form
    return session, principal, form


@dataclass(frozen=True)
class Page:
    """A page for ``role`` and above: ``template`` with what ``extra`` adds, and the session's
    one-shot flash (what the last form did) on a GET."""

    template: str
    role: Role
    extra: Extra | None = None

    async def __call__(self, site: Site, request: Request) -> Response:
        session, principal = await who(site, request)
        if principal is None:
            return to_login(request)
        if not principal.allows(self.role):
            return site.render("denied.html", request, status=403, needed=self.role.value)
        kw = await self.extra(site, request, principal) if self.extra else {}
        if request.method == "GET" and session is not None:  # what the last form did, once
            kw.update(await run_in_threadpool(session.take_flash, base_of(request) + request.url.path))
        return site.render(self.template, request, **kw)


@dataclass(frozen=True)
class Write:
    """A Documents write for ``role`` and above. Every one answers with a redirect (303) to the
    page the form was on, its outcome in the session's flash: a reload shows the page again
    instead of posting again. A failed replace keeps the text typed, for the form to show it again."""

    role: Role
    action: Action

    async def __call__(self, site: Site, request: Request) -> Response:
        from kgservice.errors import InputError

        session, p, form = await write_check(site, request, self.role)
        if isinstance(p, Response):
            return p
        base = base_of(request)
        back = safe_back(str(form.get("back") or ""), base + "/ui/documents", base)

        async def redirect(**flash: Any) -> Response:  # the flash is the page's, read under its own path
            await run_in_threadpool(session.set_flash, urlsplit(back).path, **flash)
            return RedirectResponse(back, status_code=303)

        kept = {"replace_text": str(form.get("text"))} if form.get("text") else {}
        if form.get("confirm") != "yes":
            return await redirect(error="Tick the confirmation box first: nothing was changed.", **kept)
        try:
            res = await run_in_threadpool(self.action, site, form, p)
        except InputError as exc:
            return await redirect(error=str(exc), **kept)
        if isinstance(res, Job):  # replace and forget are jobs, as over REST: the page follows it live
            return await redirect(queued={"job_id": res.id, "kind": res.kind})
        return await redirect(done=res.model_dump(mode="json"))


# -- sign-in -------------------------------------------------------------------------------
async def favicon(site: Site, request: Request) -> Response:
    return Response(status_code=204)


async def home(site: Site, request: Request) -> Response:
    _, principal = await who(site, request)
    return RedirectResponse(base_of(request) + ("/ui/ask" if principal else "/ui/login"), status_code=303)


async def login_form(site: Site, request: Request) -> Response:
    await who(site, request)
    ended = request.query_params.get("ended") == "1"
    return site.render("login.html", request, ended=ended)


async def login(site: Site, request: Request) -> Response:
    gate = site.gate
    form = await request.form()
    key = str(form.get("key") or "").strip()
    principal = await gate.keys().averify(key) if key else None
    if principal is None:
        request.scope["kg.web"] = (None, None)
        wait = gate.failed_sign_in(request.scope)
        if wait > 0:
            return site.render("login.html", request, status=429, headers={"retry-after": str(max(1, int(wait + 0.999)))},
                               error="Too many failed sign-ins from this address: wait a little and try again.")
        return site.render("login.html", request, status=401, error="That key is not valid (or it was revoked).")
    session = await run_in_threadpool(gate.sessions.create, principal.key_id)
    resp = RedirectResponse(base_of(request) + "/ui/ask", status_code=303)
    resp.set_cookie(COOKIE, session.token, max_age=int(gate.sessions.ttl), httponly=True, samesite="strict",
                    secure=request.url.scheme == "https", path="/")
    return resp


async def workspace_chooser(site: Site, request: Request) -> Response:
    """The chooser: the page acts in the workspace chosen (a cookie naming it, used only while
    the signed-in key holds it: the key decides, the cookie only picks among its workspaces).
    A page under a workspace's prefix goes to the same page under the chosen one's (the path
    names the workspace there, not the cookie)."""
    from kgservice.web.current import WS_COOKIE

    session, p, form = await write_check(site, request, Role.reader)
    if isinstance(p, Response):
        return p
    name = str(form.get("workspace") or "")
    if p.role_in(name) is None or not site.root.serves(name):
        return Response("no such workspace", status_code=404)
    base = base_of(request)
    page = safe_back(str(form.get("back") or ""), base + "/ui/ask", base).removeprefix(base)
    resp = RedirectResponse((f"{PREFIX}{name}" if base else "") + page, status_code=303)
    resp.set_cookie(WS_COOKIE, name, max_age=int(site.gate.sessions.ttl), httponly=True, samesite="strict",
                    secure=request.url.scheme == "https", path="/")
    return resp


async def logout(site: Site, request: Request) -> Response:
    session, p, _ = await write_check(site, request, Role.reader)
    if isinstance(p, Response):
        return p
    await run_in_threadpool(site.gate.sessions.drop, session.token)
    resp = RedirectResponse(base_of(request) + "/ui/login", status_code=303)
    resp.delete_cookie(COOKIE, path="/")
    return resp


# -- what the pages show besides their template ---------------------------------------------
async def ask_extra(site: Site, request: Request, principal: Principal) -> dict[str, Any]:
    """The question box's limit is the server's (a longer question would be refused there)."""
    from kgservice.server.models import MAX_QUESTION

    return {"max_question": MAX_QUESTION}


def formats() -> list[dict[str, Any]]:
    from kgservice.pipeline.ingest import accepted_formats

    return accepted_formats()


async def jobs_extra(site: Site, request: Request, principal: Principal) -> dict[str, Any]:
    from kgservice.server import ops

    found = await run_in_threadpool(ops.list_jobs, site.ctx.kb, principal, limit=50)
    return {"jobs": [ops.job_dict(j, site.settings) for j in found], "formats": formats()}


async def admin_extra(site: Site, request: Request, principal: Principal) -> dict[str, Any]:
    kb = site.ctx.kb
    here = principal.workspace or "default"
    every = await run_in_threadpool(site.gate.keys().list)
    keys = [k for k in every if here in k.workspaces]  # this workspace's
    counts = await run_in_threadpool(kb.store.counts)
    out: dict[str, Any] = {"keys": keys, "stats": {"backend": kb.store.backend, **counts}}
    if of_deployment(site, principal):
        from kgservice.workspaces import list_workspaces

        out["deployment_keys"] = [{"key_id": k.key_id, "user": k.user, "active": k.active,
                                   "grants": {w: r.value for w, r in sorted(k.workspaces.items())}} for k in every]
        out["all_workspaces"] = await run_in_threadpool(list_workspaces, site.settings)
    return out


def of_deployment(site: Site, principal: Principal) -> bool:
    """The signed-in key is the deployment's admin here, as the REST key routes decide it
    (:func:`kgservice.server.routes.admin._of_deployment`): admin in ``default`` on a server of
    every workspace. Its Admin page lists every key and changes any key's workspaces through
    ``PATCH /v1/admin/keys/{id}`` (the page's script, under ``/ui/v1``), so the REST route's
    checks (unknown workspaces, the last admin) hold on the page too."""
    from kgservice.config import DEFAULT_WORKSPACE

    return principal.role_in(DEFAULT_WORKSPACE) is Role.admin and site.root.only is None


def doc_jobs(site: Site, principal: Principal) -> dict[str, Any]:
    from kgservice.web.documents import job_documents

    return job_documents(site.ctx.kb.jobs, lambda j: j.user == principal.user or principal.allows(Role.admin))


async def documents_extra(site: Site, request: Request, principal: Principal) -> dict[str, Any]:
    from kgservice.web.documents import Listing, cited_lines, document_view, list_view

    kb = site.ctx.kb
    doc_id = request.query_params.get("doc")
    if doc_id and request.url.path == "/ui/documents":  # the table alone (its refresh) is always the list
        return {"tab": "document", "cited": cited_lines(request.query_params.get("lines", "")),
                **await run_in_threadpool(document_view, kb, doc_id)}
    how = Listing.of(request.query_params)

    def listing() -> dict[str, Any]:
        return list_view(kb.documents(), doc_jobs(site, principal), how)
    return {"tab": "list", "formats": formats(), **await run_in_threadpool(listing)}


async def history_extra(site: Site, request: Request, principal: Principal) -> dict[str, Any]:
    from kgservice.web.documents import history_view

    page_no = request.query_params.get("page", "1")
    changes = await run_in_threadpool(site.ctx.kb.history)
    return {"tab": "history", **history_view(changes, int(page_no) if page_no.isdigit() else 1)}


# -- API keys (admin) --------------------------------------------------------------------------
async def key_create(site: Site, request: Request) -> Response:
    """Answers with a redirect to /ui/admin, the new key in the session's one-shot flash: the
    secret is shown once, and a reload shows the page instead of creating a second key."""
    session, p, form = await write_check(site, request, Role.admin)
    if isinstance(p, Response):
        return p
    from kgservice.errors import InputError

    try:
        from kgservice.apikeys.model import Role as _Role

        role = _Role.parse(str(form.get("role") or "reader"))
        # a key of the workspace the page acts in, where this admin is admin: never another's
        key, rec = await run_in_threadpool(site.gate.keys().create, str(form.get("user") or ""), role,
                                           {p.workspace or "default": role})
    except InputError as exc:
        await run_in_threadpool(session.set_flash, base_of(request) + "/ui/admin", error=str(exc))
    else:
        await run_in_threadpool(session.set_flash, base_of(request) + "/ui/admin",
                                created={"key": key, "user": rec.user, "role": rec.role.value})
    return RedirectResponse(base_of(request) + "/ui/admin", status_code=303)


async def key_revoke(site: Site, request: Request) -> Response:
    """Revoking needs the confirmation box ticked, and never takes the last active admin key
    (:func:`kgservice.apikeys.model.only_admin`, as the REST route): one click must not lock
    every admin out. Answers with a redirect to the Admin page."""
    from kgservice.apikeys.model import only_admin

    session, p, form = await write_check(site, request, Role.admin)
    if isinstance(p, Response):
        return p

    async def back(**flash: Any) -> Response:
        await run_in_threadpool(session.set_flash, base_of(request) + "/ui/admin", **flash)
        return RedirectResponse(base_of(request) + "/ui/admin", status_code=303)

    key_id = str(form.get("key_id") or "")
    if form.get("confirm") != "yes":
        return await back(error="Tick the confirmation box first: no key was revoked.")
    keys = site.gate.keys()
    listed = await run_in_threadpool(keys.list)
    here = p.workspace or "default"  # only a key of this workspace, all of whose workspaces p administers
    target = next((k for k in listed if k.key_id == key_id and here in k.workspaces
                   and all(p.role_in(w) is Role.admin for w in k.workspaces)), None)
    if target is None:
        return await back(error=f"no API key with id {key_id!r}")
    if only_admin(listed, target):
        return await back(error=f"{key_id} is the only active admin key: create another admin key before "
                                "revoking it (nobody could manage keys from the page or the API afterwards).")
    await run_in_threadpool(keys.revoke, key_id)
    return await back(notice=f"Revoked key {key_id} ({target.user}, {target.role.value}).")


# -- Documents writes (the knowledge base's lifecycle methods; writes need the writer role, undo admin)
def forget_action(site: Site, form: Any, by: Principal) -> Any:
    from kgservice.server import ops

    return ops.submit_forget(site.ctx.kb, str(form.get("doc") or ""), by)


def retract_action(site: Site, form: Any, by: Principal) -> Any:
    reason = str(form.get("reason") or "").strip()
    from kgservice.errors import InputError

    if not reason:
        raise InputError("reason: say why the unit is retracted (it is kept in the history)")
    return site.ctx.kb.retract([str(form.get("unit") or "").lstrip("#")], reason, user=by.user)


def replace_action(site: Site, form: Any, by: Principal) -> Any:
    from kgservice.errors import InputError
    from kgservice.server import ops

    # a browser sends a textarea's lines with CRLF: the document keeps the line ends it had
    text = str(form.get("text") or "").replace("\r\n", "\n")
    if not text.strip():
        raise InputError("text: the new version of the document is empty")
    seen = str(form.get("version") or "").strip()
    return ops.submit_replace(site.ctx.kb, str(form.get("doc") or ""), text, by,
                              version=int(seen) if seen.isdigit() else None)


def undo_action(site: Site, form: Any, by: Principal) -> Any:
    return site.ctx.kb.undo(str(form.get("change") or ""), user=by.user)


# -- the rest ------------------------------------------------------------------------------------
async def provenance(site: Site, request: Request) -> Response:
    from starlette.responses import JSONResponse

    _, principal = await who(site, request)
    if principal is None:
        return JSONResponse({"detail": "not signed in"}, status_code=401)
    uid = request.path_params["unit_id"].lstrip("#")
    try:
        found = await run_in_threadpool(site.ctx.kb.provenance, uid)
    except Exception as exc:  # an unknown unit: no provenance (the unit route says not found)
        return JSONResponse({"detail": str(exc), "sources": []}, status_code=404)
    return JSONResponse({"sources": [p.model_dump(mode="json") for p in found]})


async def doctor(site: Site, request: Request) -> Response:
    _, principal = await who(site, request)
    if principal is None or not principal.allows(Role.admin):
        return site.render("denied.html", request, status=403, needed="admin")
    from kgservice.admin.doctor import check
    from kgservice.server.disclosure import redact_all

    report = await run_in_threadpool(lambda: check(site.ctx.kb.parts).to_dict())
    paths = request.query_params.get("paths") == "1"  # absolute server paths: only when the admin asks
    return site.render("doctor.html", request, report=report if paths else redact_all(report, site.settings),
                       paths=paths)


async def api_docs(site: Site, request: Request) -> Response:
    """The REST reference (Swagger UI, vendored under static/: it works offline), public as
    /openapi.json is."""
    base = base_of(request)
    return HTMLResponse(site.env.get_template("api_docs.html").render(
        base=base, asset=lambda path: base + site.assets.url(path)))


async def static(site: Site, request: Request) -> Response:
    return await site.assets.serve(request)


#: every route of the pages: (path, handler, methods; None: any)
ROUTES: list[tuple[str, Handler, list[str] | None]] = [
    ("/favicon.ico", favicon, None), ("/", home, None), ("/ui", home, None), ("/ui/", home, None),
    ("/ui/login", login_form, ["GET"]), ("/ui/login", login, ["POST"]),
    ("/ui/logout", logout, ["POST"]),
    ("/ui/workspace", workspace_chooser, ["POST"]),
    ("/ui/ask", Page("ask.html", Role.reader, ask_extra), None),
    ("/ui/explore", Page("explore.html", Role.reader), None),
    ("/ui/documents", Page("documents.html", Role.reader, documents_extra), None),
    ("/ui/documents/table", Page("docs_table.html", Role.reader, documents_extra), None),
    ("/ui/documents/history", Page("history.html", Role.reader, history_extra), None),
    ("/ui/documents/forget", Write(Role.writer, forget_action), ["POST"]),
    ("/ui/documents/retract", Write(Role.writer, retract_action), ["POST"]),
    ("/ui/documents/replace", Write(Role.writer, replace_action), ["POST"]),
    ("/ui/documents/undo", Write(Role.admin, undo_action), ["POST"]),
    ("/ui/provenance/{unit_id:path}", provenance, None),
    ("/ui/jobs", Page("jobs.html", Role.writer, jobs_extra), None),
    ("/ui/jobs/list", Page("jobs_list.html", Role.writer, jobs_extra), None),
    ("/ui/admin", Page("admin.html", Role.admin, admin_extra), None),
    ("/ui/admin/keys", key_create, ["POST"]),
    ("/ui/admin/keys/revoke", key_revoke, ["POST"]),
    ("/ui/admin/doctor", doctor, None),
    ("/docs", api_docs, None),
    ("/ui/static/{path:path}", static, ["GET", "HEAD"]),
]


def bound(site: Site, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` as a Starlette endpoint of this site."""
    async def endpoint(request: Request) -> Response:
        return await handler(site, request)
    endpoint.__name__ = getattr(handler, "__name__", type(handler).__name__.lower())
    return endpoint


def build_pages(gate: Any, settings: Any, ctx: Any) -> Starlette:
    """The pages of :data:`ROUTES` over this gate, settings and server context."""
    from kgservice.errors import InputError, ServiceError

    site = Site.build(gate, settings, ctx)

    async def failed(request: Request, exc: Exception) -> Response:
        """A library refusal inside a page (bad input, a store that is down) as a page saying
        so, with the API's status for it; these escaped the pages' app as a bare-text 500 with a
        traceback in the log (the pages are their own app, outside the API's error handlers)."""
        from kgservice.server.disclosure import redact
        from kgservice.server.errors import status_of

        status = status_of(exc)
        title = "Not found" if status == 404 else "Not available" if status >= 500 else "Cannot do that"
        return site.render("failed.html", request, status=status, title=title, message=redact(str(exc), site.settings))

    return Starlette(routes=[Route(path, bound(site, handler), methods=methods) for path, handler, methods in ROUTES],
                     exception_handlers={InputError: failed, ServiceError: failed})
