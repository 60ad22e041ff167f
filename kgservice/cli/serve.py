"""``kg serve`` (REST + MCP over HTTP), ``kg mcp`` (MCP over stdio) and ``kg keys``: registered by :func:`register`.

The server stack (fastapi, uvicorn, mcp) is imported inside the commands, so other commands
do not pay for it.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from kgservice.cli.common import err, errors_reported, knowledge_base, out, print_json, print_listing, settings_of

def _need_server_stack() -> None:
    """One clear line instead of an ImportError traceback when the `serve` extra is missing."""
    import importlib.util

    try:
        import fastapi  # noqa: F401
        import prometheus_client  # noqa: F401
        import uvicorn  # noqa: F401

        # found, not imported: the server builds MCP after it starts listening (kgservice.server.mcp_mount)
        if importlib.util.find_spec("mcp") is None:
            raise ModuleNotFoundError("No module named 'mcp'", name="mcp")
    except ImportError as exc:
        err.print(f"error: the server needs the `serve` extra ({exc.name} is missing): "
                  "pip install 'kgservice[serve]'", markup=False, highlight=False)
        raise typer.Exit(1) from None


keys_app = typer.Typer(help="Per-user API keys for `kg serve` (roles: reader ⊂ writer ⊂ admin).", no_args_is_help=True)


def serve_command(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to bind (0.0.0.0 for every interface).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0: pick a free one).")] = 8080,
    no_auth: Annotated[bool, typer.Option("--no-auth", help="Serve without API keys (loopback only): every "
                                          "request has the local role (KG_LOCAL_ROLE, default reader).")] = False,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn log level.")] = "info",
) -> None:
    """Serve REST under /v1 (OpenAPI at /docs) and MCP Streamable HTTP at /mcp, in one process."""
    _need_server_stack()
    import uvicorn

    from kgservice.server import ServeOptions, create_app

    from kgservice.deployment import claim_data_dir, require_shared_vectors
    from kgservice.stores.factory import capabilities

    settings = settings_of(ctx)
    owns_data_dir = capabilities(settings).one_process  # runs its jobs itself, refuses other writers
    with errors_reported():
        require_shared_vectors(settings, "kg serve")
    _port_free_or_exit(host, port)
    shown = f"[{host}]" if ":" in host else host
    with errors_reported():
        hold = claim_data_dir(settings, f"http://{shown}:{port}")  # before anything is opened
        url = f"http://{shown}:{port}"
        app = create_app(settings, ServeOptions(host=host, no_auth=no_auth, announce=True,
                                                run_jobs=owns_data_dir, check_model=True,
                                                warm_up=True,
                                                # each named workspace's directory, taken as it is opened
                                                claim=(lambda s: claim_data_dir(s, url, whole=True))
                                                if owns_data_dir else None))
        if owns_data_dir and not settings.read_only:
            # the queue its jobs run from, opened now: a damaged jobs.sqlite3 is one line and exit 1
            # (the same the CLI prints), not uvicorn's startup traceback
            app.state.ctx.kb.jobs
    if owns_data_dir:
        err.print("embedded backend: this server owns the data directory and runs its jobs itself; `kg worker`, "
                  "`kg ingest` and other servers on it are refused (use Neo4j + a Qdrant server to run several "
                  "`kg serve`)", markup=False, highlight=False)
    if no_auth:
        err.print(f"--no-auth: no API keys; every request on {host} has the {settings.local_role} role",
                  markup=False, highlight=False)
    else:
        with errors_reported():
            if not app.state.ctx.keys().list():
                err.print("no API keys yet: every request will get 401; create one with "
                          "`kg keys create --user NAME --role admin`", markup=False, highlight=False)
    from kgservice.server.logs import install_access_log_redaction
    from kgservice.server.request_ids import log_config

    # proxy headers are read by the app itself, from KG_TRUSTED_PROXIES only (kgservice.server.proxies)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=True,
                            lifespan="on", proxy_headers=False, server_header=False, log_config=log_config())
    install_access_log_redaction()  # after Config: it configures uvicorn's loggers
    server = uvicorn.Server(config)
    try:
        server.run()
    finally:
        if hold is not None:
            hold.release()


def _port_free_or_exit(host: str, port: int) -> None:
    """A busy address is a service failure (exit 1) with one line, not uvicorn's startup-failure code."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            err.print(f"error: cannot listen on {host}:{port} ({exc.strerror or exc}); stop what uses it or "
                      f"pick another --port", markup=False, highlight=False)
            raise typer.Exit(1) from None


def mcp_command(ctx: typer.Context) -> None:
    """MCP over stdio for a local agent (no key: the role is KG_LOCAL_ROLE / local_role, default reader)."""
    _need_server_stack()
    import anyio

    from kgservice.server.auth import Principal, Role
    from kgservice.server.context import ServerContext
    from kgservice.server.mcp_server import build_mcp
    from kgservice.service import KnowledgeBase

    settings = settings_of(ctx)
    with errors_reported():
        local = Principal("local", Role.parse(settings.local_role))
    sc = ServerContext(settings=settings, kb=KnowledgeBase(settings), local=local)
    mcp = build_mcp(sc)
    err.print(f"kg mcp: MCP over stdio, role {local.role.value}", markup=False, highlight=False)
    serve_stdio = mcp.run_stdio_async
    try:
        anyio.run(serve_stdio)
    finally:
        sc.close()


def _deployment(ctx: typer.Context) -> typer.Context:
    """The keys are the deployment's, kept with the ``default`` workspace whatever ``--workspace``
    says (:meth:`KnowledgeBase.key_store`): the key commands open and check that workspace (a
    context whose settings name it, for ``knowledge_base`` and ``refuse_beside_server``)."""
    from dataclasses import replace
    from types import SimpleNamespace

    from kgservice.config import DEFAULT_WORKSPACE

    settings = settings_of(ctx)
    if settings.workspace == DEFAULT_WORKSPACE:
        return ctx
    # find_root: knowledge_base asks the root which command runs (keys: one that may make its workspace)
    return SimpleNamespace(obj={**ctx.obj, "settings": replace(settings, workspace=DEFAULT_WORKSPACE)},  # type: ignore[return-value]
                           find_root=ctx.find_root)


def _grants(ctx: typer.Context, specs: list[str], role: str) -> dict:
    """The new key's workspaces: ``--workspace NAME[:ROLE]`` (each must exist), or else the
    one ``kg --workspace`` / KG_WORKSPACE names (made if new, as before) with ``--role``."""
    from kgservice.apikeys.model import KeyError_, Role, parse_grants
    from kgservice.config import init_data_dir

    settings = settings_of(ctx)
    if not specs:
        init_data_dir(settings)  # `kg --workspace NAME keys create` makes NAME, as it always did
        return {settings.workspace: Role.parse(role)}
    grants = parse_grants(specs, role)
    from kgservice.workspaces import list_workspaces

    known = set(list_workspaces(settings))
    missing = [name for name in grants if name not in known]
    if missing:
        raise KeyError_(f"--workspace: no workspace {missing[0]!r} in {settings.data_dir} "
                        f"(`kg workspaces create {missing[0]}` first; `kg workspaces list` shows them)")
    return grants


@keys_app.command("create")
def keys_create(
    ctx: typer.Context,
    user: Annotated[str, typer.Option("--user", help="Who the key is for (recorded on what they write).")],
    role: Annotated[str, typer.Option("--role", help="reader | writer | admin (the role in every --workspace "
                                      "that names none)")] = "reader",
    workspace: Annotated[list[str], typer.Option("--workspace", help="NAME or NAME:ROLE, repeatable: the "
                                                 "workspaces the key may act in (default: `kg --workspace`'s, "
                                                 "i.e. default).")] = [],  # noqa: B006
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Create a key and print it once; only its sha256 is stored."""
    from kgservice.apikeys.model import Role, top_role
    from kgservice.cli.common import refuse_beside_server

    with errors_reported():
        grants = _grants(ctx, workspace, role)  # a bad role or workspace is exit 2, server or not
    wanted = top_role(grants)
    dep = _deployment(ctx)
    # beside a running server only the first admin key (the way in); the rest through its API
    refuse_beside_server(dep, f"`kg keys create --role {wanted.value}`", unless_no_admin=wanted is Role.admin)
    with knowledge_base(dep) as kb:
        keys = kb.key_store()
        key, rec = keys.create(user, wanted, grants)
        if as_json:
            print_json({"key": key, **rec.model_dump(mode="json")})
            return
        where = ", ".join(f"{name} ({r.value})" for name, r in rec.workspaces.items())
        err.print(f"created key {rec.key_id} for {rec.user} in {where}; it is shown only now:",
                  markup=False, highlight=False)
        sys.stdout.write(key + "\n")


@keys_app.command("list")
def keys_list(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Every key of the deployment: id, user, role, workspaces, created, last used, revoked (never the key)."""
    with knowledge_base(_deployment(ctx)) as kb:
        rows = kb.key_store().list()
        if as_json:
            print_json([r.model_dump(mode="json") for r in rows])
            return
        print_listing(f"API keys ({len(rows)})", ("key id", "user", "role", "workspaces", "created", "last used",
                                                   "revoked"),
                      [(r.key_id, r.user, r.role.value, " ".join(f"{k}:{v.value}" for k, v in r.workspaces.items()),
                        r.created, r.last_used or "", r.revoked_at or "") for r in rows])


@keys_app.command("revoke")
def keys_revoke(ctx: typer.Context, key_id: Annotated[str, typer.Argument(help="The key id (`kg keys list`).")]) -> None:
    """Revoke a key: refused from the next request on, by every server sharing the store."""
    from kgservice.cli.common import refuse_beside_server

    dep = _deployment(ctx)
    refuse_beside_server(dep, "`kg keys revoke`")
    with knowledge_base(dep) as kb:
        rec = kb.key_store().revoke(key_id)
        out.print(f"revoked {rec.key_id} ({rec.user}, {rec.role.value}) at {rec.revoked_at}", markup=False,
                  highlight=False)


@keys_app.command("grant")
def keys_grant(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(help="The key id (`kg keys list`).")],
    workspace: Annotated[list[str], typer.Option("--workspace", help="NAME or NAME:ROLE, repeatable, at least "
                                                 "one: every workspace the key acts in from now on.")] = [],  # noqa: B006
    role: Annotated[str, typer.Option("--role", help="The role in each --workspace that names none.")] = "reader",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Replace a key's workspaces (its secret unchanged), as `PATCH /v1/admin/keys/{id}` does."""
    from kgservice.apikeys.model import KeyError_
    from kgservice.cli.common import refuse_beside_server

    with errors_reported():
        if not workspace:
            raise KeyError_("--workspace: name at least one workspace (`kg keys revoke` takes them all away)")
        grants = _grants(ctx, workspace, role)
    dep = _deployment(ctx)
    refuse_beside_server(dep, "`kg keys grant`")
    with knowledge_base(dep) as kb:
        rec = kb.key_store().set_grants(key_id, grants)
        if as_json:
            print_json(rec.model_dump(mode="json"))
            return
        where = ", ".join(f"{name} ({r.value})" for name, r in rec.workspaces.items())
        out.print(f"{rec.key_id} ({rec.user}) acts in {where}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
    app.command("mcp")(mcp_command)
    app.add_typer(keys_app, name="keys")

