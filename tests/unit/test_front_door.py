"""DESIGN §9's rule, checked from the commands and routes themselves: every `kg` command and
every REST route calls the :class:`~kgservice.service.KnowledgeBase` method of its own name.

The commands are read from the Typer app and the routes from the route modules' routers; the
source of each callback is parsed and the calls on a knowledge base (``kb.x(...)``,
``ctx_of(request).kb.x(...)``, ``self.kb.x(...)``) are collected, following the helpers it calls
(functions of its own module, of ``server/ops.py`` and methods of the server context) a few
levels down. A command or route that must not (or cannot) follow the rule is in one of the
tables below with the reason; an entry that becomes unnecessary fails too, so the tables
stay true.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

from kgservice.service import KnowledgeBase

# command -> (the method it calls instead of the one of its name, or None: exempt, it is not an
# action on the knowledge base; why)
COMMAND_EXCEPTIONS: dict[str, tuple[str | None, str]] = {
    "ingest": ("ingest_paths", "files and folders of both kinds (unit notation, text) in one method"),
    "cache clear": ("clear_caches", "the method says what it clears; the command nests under `kg cache`"),
    "keys create": ("key_store", "the key store is a part with its own API (create / list / revoke)"),
    "keys list": ("key_store", "the key store is a part with its own API (create / list / revoke)"),
    "keys revoke": ("key_store", "the key store is a part with its own API (create / list / revoke)"),
    "keys grant": ("key_store", "the key store is a part with its own API (set_grants)"),
    "jobs list": ("jobs", "the job queue is a part with its own API (list / get / cancel)"),
    "jobs show": ("jobs", "the job queue is a part with its own API (list / get / cancel)"),
    "jobs cancel": ("jobs", "the job queue is a part with its own API (list / get / cancel)"),
    "jobs prune": ("jobs", "the job queue is a part with its own API (list / get / cancel / prune)"),
    "query": (None, "graphify's drop-in: reads graph.json, never a knowledge base (DESIGN §7)"),
    "path": (None, "graphify's drop-in: reads graph.json, never a knowledge base (DESIGN §7)"),
    "explain": (None, "graphify's drop-in: reads graph.json, never a knowledge base (DESIGN §7)"),
    "save-result": (None, "graphify's drop-in: writes a memory file, never a knowledge base (DESIGN §7)"),
    "reflect": (None, "graphify's drop-in: reads memory files, never a knowledge base (DESIGN §7)"),
    "affected": (None, "graphify's drop-in: reads graph.json, never a knowledge base (DESIGN §7)"),
    "god-nodes": (None, "graphify's drop-in: reads graph.json, never a knowledge base (DESIGN §7)"),
    "demo": (None, "builds its own throwaway knowledge base per step (a tour, not an action)"),
    "serve": (None, "starts the server, which owns the knowledge base (and checks it has keys first)"),
    "mcp": (None, "starts the MCP server over stdio, which owns the knowledge base"),
    "docs list": ("documents", "the command nests under `kg docs`; the method is the plural noun"),
    "docs show": ("document", "the command nests under `kg docs`; the method is the noun"),
    "docs original": ("original", "the command nests under `kg docs`; the method is the noun"),
    "show": ("unit", "one unit as a person reads it: kb.unit and its sources from kb.provenance"),
    "worker": (None, "runs the job loop over kb.jobs; each job calls the method of its kind"),
    **{f"workspaces {sub}": (None, "the set of workspaces of a data directory, not one knowledge base "
                                   "(kgservice.workspaces)") for sub in ("list", "create", "rename", "delete")},
}

# route endpoint -> (the method it calls instead of the one of its name, or None; why)
ROUTE_EXCEPTIONS: dict[str, tuple[str | None, str]] = {
    "node": ("resolve_nodes", "an id or label to one node: the lookup neighbors shares; no method of its own"),
    "query": (None, "graphify's query over the server's graph.json export, not the knowledge base"),
    "path": (None, "graphify's path over the server's graph.json export, not the knowledge base"),
    "explain": (None, "graphify's explain over the server's graph.json export, not the knowledge base"),
    "ingest": ("jobs", "queued as a job (checked first): the worker calls ingest_* when it runs it"),
    "job": ("jobs", "the job queue is a part with its own API"),
    "cancel": ("jobs", "the job queue is a part with its own API"),
    "prune": ("jobs", "the job queue is a part with its own API"),
    "job_events": ("jobs", "the job queue is a part with its own API"),
    "expand": ("expand_cached", "expand plus whether it came from the cache (the reply's `cached` field)"),
    "create_key": ("key_store", "the server context's key store, opened once per server"),
    "list_keys": ("key_store", "the server context's key store, opened once per server"),
    "revoke_key": ("key_store", "the server context's key store, opened once per server"),
    "change_key": ("key_store", "the server context's key store, opened once per server"),
    "cache_clear": ("clear_caches", "the method says what it clears"),
    "livez": (None, "liveness: answers without touching any part"),
    "readyz": (None, "readiness: probes each part on its own, to say which one is down"),
    "metrics": (None, "the server's own counters"),
}


def _is_kb(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "kb") or (isinstance(node, ast.Attribute) and node.attr == "kb")


def _kb_calls(fn: Callable[..., Any], depth: int = 3, seen: set[Any] | None = None) -> set[str]:
    """Methods called on a knowledge base by ``fn`` or the helpers it calls (same module,
    ``server.ops``, the server context), ``depth`` levels down. ``kb.jobs.list()`` counts
    as ``jobs`` (a part used through its own API)."""
    from kgservice.server import ops
    from kgservice.server.context import ServerContext

    seen = set() if seen is None else seen
    if fn in seen or depth < 0:
        return set()
    seen.add(fn)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError):
        return set()
    found: set[str] = set()
    module = sys.modules.get(getattr(fn, "__module__", ""), None)
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and _is_kb(n.value):
            if n.attr in vars(KnowledgeBase) or hasattr(KnowledgeBase, n.attr):
                found.add(n.attr)
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        if (isinstance(f, ast.Name) and f.id == "getattr" and len(n.args) >= 2 and _is_kb(n.args[0])
                and isinstance(n.args[1], ast.Constant)):
            found.add(str(n.args[1].value))  # getattr(kb, "jobs", None)
        helper = None
        if isinstance(f, ast.Name) and module is not None:
            helper = getattr(module, f.id, None)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "ops":
            helper = getattr(ops, f.attr, None)
        elif isinstance(f, ast.Attribute) and hasattr(ServerContext, f.attr) and not _is_kb(f.value):
            helper = getattr(ServerContext, f.attr, None)
        if callable(helper) and getattr(helper, "__module__", "").startswith("kgservice."):
            found |= _kb_calls(helper, depth - 1, seen)
    return found


def _commands() -> Iterator[tuple[str, Callable[..., Any]]]:
    from kgservice.cli.app import app

    def walk(t: Any, prefix: tuple[str, ...]) -> Iterator[tuple[str, Callable[..., Any]]]:
        for c in t.registered_commands:
            yield " ".join(prefix + (c.name or c.callback.__name__.replace("_", "-"),)), c.callback
        for g in t.registered_groups:
            yield from walk(g.typer_instance, prefix + (g.name,))

    yield from walk(app, ())


def _routes() -> Iterator[tuple[str, Callable[..., Any]]]:
    from kgservice.server.routes import admin, graphify, health, jobs, query

    for module in (query, graphify, jobs, admin, health):
        for route in module.router.routes:
            yield route.endpoint.__name__, route.endpoint  # type: ignore[attr-defined]
    yield "metrics", health.metrics


def _check(items: Iterator[tuple[str, Callable[..., Any]]], exceptions: dict[str, tuple[str | None, str]],
           method_of: Callable[[str], str]) -> list[str]:
    problems = []
    names = set()
    for name, fn in items:
        names.add(name)
        calls = _kb_calls(fn)
        expected, _why = exceptions.get(name, (method_of(name), ""))
        if expected is None:
            continue
        if expected not in calls:
            problems.append(f"{name}: calls {sorted(calls) or 'no KnowledgeBase method'}, not {expected}")
        elif name in exceptions and exceptions[name][0] == method_of(name):
            problems.append(f"{name}: follows the rule now; drop it from the exceptions")
    problems += [f"{name}: in the exceptions but no such command/route" for name in exceptions if name not in names]
    return problems


def test_every_command_calls_the_method_of_its_name():
    problems = _check(_commands(), COMMAND_EXCEPTIONS, lambda name: name.replace(" ", "_").replace("-", "_"))
    assert not problems, "\n".join(problems)


def test_every_route_calls_the_method_of_its_name():
    problems = _check(_routes(), ROUTE_EXCEPTIONS, lambda name: name)
    assert not problems, "\n".join(problems)


def test_every_exception_says_why():
    for table in (COMMAND_EXCEPTIONS, ROUTE_EXCEPTIONS):
        for name, (_method, why) in table.items():
            assert len(why.split()) >= 4, f"{name}: the reason is missing or too short"
