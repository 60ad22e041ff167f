"""Every failure kgservice reports falls under one of two roots, and the root decides the exit code.

`InputError` (exit 2): what the caller gave is wrong: fix the input and retry; nothing was stored.
`ServiceError` (exit 1): a backend, model or file system failed: the input may be fine, retrying
later (or the repair command the message names) may help.

Module-specific errors subclass one root and keep their builtin base (`ValueError`,
`RuntimeError`, ...) so code that caught those keeps working. The CLI and the server map the
roots, not the leaves, to exit codes and HTTP statuses, so a new error class needs no new
handler; a builtin that reaches them is a bug (one line, exit 1 / HTTP 500), so the library
raises these classes, and turns an OS or SQLite failure into one where it happens, naming the file. Where a class sits under both roots (`IngestConflict`: a store error caused by the
batch), `InputError` wins: the boundary checks it first.

>>> class BadThing(InputError, ValueError): pass
>>> exit_code(BadThing("x")), exit_code(ServiceError("y")), exit_code(KeyError("z")) is None
(2, 1, True)
"""

from __future__ import annotations

BAD_INPUT = 2
FAILED = 1


class KgError(Exception):
    """Common root; catch this to catch every error kgservice raises on purpose."""


class InputError(KgError):
    """The input (file, argument, config, request body) is wrong; exit 2 / HTTP 4xx."""


class ServiceError(KgError):
    """A backend, model, file system or LLM failed; exit 1 / HTTP 5xx."""


class StoreUnavailable(ServiceError):
    """A backend every request needs (the graph store, the key store on it) is not answering:
    HTTP 503 with Retry-After, exit 1; retrying once it is back is the fix."""

    http_status = 503


class ConfigError(InputError, ValueError):
    """A setting (config file, environment variable, option) is wrong; the message names it."""


class InvalidArgument(InputError, ValueError):
    """A parameter, option or argument is outside what it allows; the message names it and the range."""


class InputFileError(InputError, ValueError):
    """A file or folder given as input cannot be used: missing, not a regular file, not UTF-8, of a
    type that cannot be read; the message names the file."""


class ServiceFileError(ServiceError, OSError):
    """A file kgservice keeps (job queue, API keys, change log, document ledger) or writes (an
    export, a dump) cannot be used. It carries the file, whether it is damaged and the OS error
    number, and its message already says the fix (``kg doctor --repair`` for a damaged file, free
    space for a full disk), so a boundary prints it as it is."""

    def __init__(self, message: str, *, path: object = None, damaged: bool = False, errno: int | None = None):
        super().__init__(message)
        self.path = path
        self.damaged = damaged
        self.errno = errno


# The graph store's errors live here, below every module that raises or catches them (the stores,
# the job queue and the key stores they provide, the lifecycle), so that none of those has to import
# kgservice.stores for them; kgservice.stores.base re-exports them under their old names.
class StoreError(ServiceError, RuntimeError):
    """The graph store (either backend) failed or refused; the message names what and the fix."""


class IngestConflict(StoreError, InputError):
    """A batch that cannot be applied as a whole, or a new version of a document based on one
    that is no longer current: HTTP 409; nothing from it was stored."""

    http_status = 409


class ReadOnlyError(StoreError):
    """A write was attempted on a knowledge base / store opened read-only (KG_READ_ONLY)."""


class StoreWriteError(StoreError, OSError):
    """A store file could not be written (full or read-only disk); what was being written is not
    stored and the store is as it was before."""


class StoreDamaged(StoreError):
    """The stored files cannot be trusted: ``kind`` is ``damaged`` (a checksum failed, a file is
    truncated or foreign) or ``missing`` (a file the others depend on is gone). Nothing is read
    or written until it is fixed; ``fix`` names the commands that do (salvage or restore)."""

    def __init__(self, message: str, *, kind: str, fix: str) -> None:
        super().__init__(f"{message}. Nothing was changed. {fix}")
        self.kind = kind
        self.fix = fix
        self.detail = message


def exit_code(exc: BaseException) -> int | None:
    """2 for input errors, 1 for service errors, None for anything else (a bug: let it raise)."""
    if isinstance(exc, InputError):
        return BAD_INPUT
    if isinstance(exc, ServiceError):
        return FAILED
    return None
