"""Shared CLI plumbing: settings on the context, one error boundary, JSON output."""

from __future__ import annotations

import errno
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click
import typer
import typer.exceptions
from rich.console import Console
from rich.markup import escape

from kgservice.errors import BAD_INPUT, FAILED, InputError, ServiceError

if TYPE_CHECKING:  # the front door (and the pydantic models under it) loads when a command opens it
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

# soft_wrap: a message is never hard-wrapped at the console width (80 columns when stderr is not a
# terminal): CI logs and scripts grep whole sentences, and a long temp path must not split one.
PIPE_WIDTH = 400  # the width tables are laid out for when stdout is a pipe or file


def _pipe_width(stream: Any) -> int | None:
    """None (the terminal's own width, or COLUMNS) on a terminal; wide otherwise: rich falls back
    to 80 columns without a terminal, which broke every long line and table cell in a pipe."""
    import os

    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return None if tty or os.environ.get("COLUMNS") else PIPE_WIDTH


# markup=False: text from the store (unit notation `{tea} [contains] {caffeine}`, labels, document
# names, paths) is printed as it is, in tables too; a print that styles says so (markup=True) and
# escapes what it interpolates.
err = Console(stderr=True, soft_wrap=True, width=_pipe_width(sys.stderr), markup=False)
out = Console(soft_wrap=True, width=_pipe_width(sys.stdout), markup=False)
T = TypeVar("T")
# BrokenPipeError: the reader closed the pipe (`kg expand X | head -1`), no error of ours: the
# entry point ends the run (kgservice.cli.app)
_CLI_FLOW = (typer.Exit, typer.Abort, typer.exceptions.TyperException, click.exceptions.Exit, click.exceptions.Abort,
             click.ClickException, BrokenPipeError)

# exit codes (kgservice.errors): BAD_INPUT = 2, the input was wrong (fix it and retry); FAILED = 1, the service failed
__all__ = ["BAD_INPUT", "FAILED", "err", "out", "errors_reported", "knowledge_base", "print_json", "settings_of", "with_llm"]


# the commands that may make a workspace by writing to it; every other command refuses a named
# workspace that does not exist yet (a mistyped name is an error, not an empty knowledge base)
MAKES_WORKSPACE = frozenset({"init", "ingest", "ingest-text", "sync", "restore", "keys", "demo"})
# the commands that may open a store where there is none yet: the servers take their first
# documents over the wire; `kg workspaces` lists and makes them
STARTS_EMPTY = frozenset({"serve", "worker", "mcp", "workspaces"})
# the commands that serve a workspace they open later (in the background, per request): one
# named that does not exist is refused before they start, on either backend
SERVES = frozenset({"serve", "worker", "mcp"})


def settings_of(ctx: typer.Context) -> Settings:
    return ctx.obj["settings"]


def with_llm(ctx: typer.Context, llm: str | None) -> None:
    """``--llm MODEL``: this run's knowledge base uses that model instead of the configured one."""
    if llm:
        ctx.obj["settings"] = ctx.obj["settings"].with_overrides(llm_model=llm)


@contextmanager
def knowledge_base(ctx: typer.Context) -> Iterator[KnowledgeBase]:
    """The command's knowledge base, opened for it. A command that only reads refuses a folder
    holding no store (``KnowledgeBase.missing``): opening one creates it, so a mistyped
    ``--data-dir`` would otherwise answer from a new empty store as if it had looked."""
    from kgservice.config import DEFAULT_WORKSPACE
    from kgservice.service import KnowledgeBase
    from kgservice.stores.factory import in_process

    settings = settings_of(ctx)
    reads = ctx.find_root().invoked_subcommand not in MAKES_WORKSPACE | STARTS_EMPTY
    if reads and (missing := KnowledgeBase.missing(settings)):
        with errors_reported():
            raise InputError(missing)
    kb = KnowledgeBase(settings)
    with errors_reported():
        try:
            if reads and settings.workspace != DEFAULT_WORKSPACE and not in_process(settings):
                # a named workspace in a shared store: opened now, so one nobody made is refused
                # (Parts.store's check) before the command does anything
                kb.store  # noqa: B018
            yield kb
        finally:
            kb.close()


def refuse_beside_server(ctx: typer.Context, what: str, *, unless_no_admin: bool = False) -> None:
    """Exit 1 with one line, before anything is opened, when a running `kg serve` owns the
    embedded data directory this command would write (the server runs its jobs itself).

    ``unless_no_admin``: the first admin key (`kg keys create --role admin` on a store with no
    admin key yet) goes through: a server started before any key exists cannot make it (every
    request is 401), so refusing would leave stopping it as the only way in. Any other key
    waits for that admin, who makes it through the server (POST /v1/admin/keys)."""
    from kgservice.deployment import refuse_if_served

    settings = settings_of(ctx)
    if unless_no_admin and not _has_admin_key(settings):
        return
    with errors_reported():
        refuse_if_served(settings, what)


def _has_admin_key(settings: Settings) -> bool:
    """An active admin key in the store's key file, read without opening the store the running
    server owns (only a store of files has a server owning it)."""
    from kgservice.stores.factory import capabilities

    files = capabilities(settings).files
    return files is not None and files.has_active_admin()


@contextmanager
def errors_reported() -> Iterator[None]:
    """The CLI's one error boundary: a kgservice error becomes its message on stderr and its exit
    code (2 input, 1 service); anything else escaping the library is a bug, reported in one line
    (exit 1) rather than a traceback."""
    try:
        yield
    except _CLI_FLOW:  # the command's own exit, abort or usage error; a closed pipe
        raise
    except InputError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", markup=True, highlight=False)
        raise typer.Exit(BAD_INPUT) from None
    except ServiceError as exc:
        if _vector_store_error(exc):
            _vector_failure(exc)
        err.print(f"[red]error:[/red] {escape(str(exc) + _disk_hint(exc))}", markup=True, highlight=False)
        raise typer.Exit(FAILED) from None
    except Exception as exc:
        err.print(f"[red]error:[/red] internal error, please report it ({type(exc).__name__}: {escape(str(exc))})",
                  markup=True, highlight=False)
        raise typer.Exit(FAILED) from None


def _vector_store_error(exc: BaseException) -> bool:
    """A locked / unreachable / mismatched vector store. Looked up in sys.modules, so the CLI does
    not import the vector package to start: if it was never imported, this cannot be one of its."""
    ours = sys.modules.get("kgservice.vectors.base")
    return bool(ours and isinstance(exc, ours.VectorStoreError))


def _disk_hint(exc: BaseException) -> str:
    """What to do about a full or read-only disk (the errno says which; the message may not)."""
    code = getattr(exc, "errno", None)
    if code in (errno.ENOSPC, errno.EDQUOT):
        return " (the disk is full: free space, then run the same command again; nothing was half-written)"
    if code == errno.EROFS:
        return " (the data directory is on a read-only file system: reads work, writes need a writable one)"
    return ""


def _vector_failure(exc: BaseException) -> None:
    msg = str(exc)
    if "kg doctor" not in msg:
        msg += ("\n(if this happened during an ingest, its units are stored: `kg doctor --repair` embeds the "
                "missing nodes once the vector store is available)")
    err.print(f"[red]error:[/red] vector store: {escape(msg)}", markup=True, highlight=False)
    raise typer.Exit(FAILED) from None


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def print_listing(title: str, columns: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    """A listing (keys, jobs) as one rich table: the commands differ only in their columns."""
    from rich.table import Table

    table = Table(title=title)
    for col in columns:
        table.add_column(col)
    for row in rows:
        table.add_row(*row)
    out.print(table)
