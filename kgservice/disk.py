"""Disk helpers shared by every layer that writes files: free-space probes for the layers that
refuse to write near a full disk (the vector store's memory-mapped files, ``kg salvage``'s copy
of a damaged store), one definition so they agree on which file system they measure; the
directory sync that makes a file's creation, rename or removal durable; and the one way a file
is replaced whole (:func:`replaced`)."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO


def free_bytes(path: Path | str) -> int:
    """Free space on the file system that holds ``path`` (its nearest existing parent is measured,
    so a directory about to be created is measured where it will be).

    >>> free_bytes("/no/such/dir/yet") == free_bytes("/")
    True
    """
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def fsync_dir(d: Path | str) -> None:
    """Make a creation, rename or removal inside ``d`` durable (best effort where directories
    cannot be opened)."""
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def replaced(path: Path | str, *, tmp: Path | None = None, sync_dir: bool = False,
             open_tmp: Callable[[Path], AbstractContextManager[IO[bytes]]] | None = None) -> Iterator[IO[bytes]]:
    """Write ``path`` whole or not at all: what is written to the yielded file goes to a temp file
    beside it, which is fsynced once closed and renamed over ``path``; on any failure (an
    exception in the block, a full disk) the temp file is removed and ``path`` is as it was. So a
    reader never sees a half-written file and a crash leaves at most a stray temp file.

    ``tmp``: the temp file's name (default ``.NAME.tmp-PID-RANDOM``, so concurrent writers never
    share one); ``sync_dir``: also make the rename durable; ``open_tmp``: how to open the temp file
    (default ``open(tmp, "wb")``; a gzip writer, say, whose trailer is written when it closes).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); f = d / "a.txt"; _ = f.write_text("old")
    >>> with replaced(f) as fh:
    ...     _ = fh.write(b"new")
    >>> f.read_text(), sorted(p.name for p in d.iterdir())
    ('new', ['a.txt'])
    >>> try:
    ...     with replaced(f) as fh:
    ...         _ = fh.write(b"half")
    ...         raise OSError("disk full")
    ... except OSError:
    ...     pass
    >>> f.read_text(), sorted(p.name for p in d.iterdir())
    ('new', ['a.txt'])
    """
    path = Path(path)
    tmp = tmp or path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        with (open_tmp(tmp) if open_tmp is not None else open(tmp, "wb")) as fh:
            yield fh
        with open(tmp, "rb") as done:  # after the writer closed: all it wrote, a gzip trailer included
            os.fsync(done.fileno())
        os.replace(tmp, path)
        if sync_dir:
            fsync_dir(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_input(path: Path | str) -> bytes:
    """The bytes of a file the caller gave as input; a file that cannot be read (missing, a
    folder, no permission) is an :class:`~kgservice.errors.InputFileError` naming it and why.

    >>> read_input("/no/such/file.units")
    Traceback (most recent call last):
    ...
    kgservice.errors.InputFileError: cannot read /no/such/file.units: No such file or directory
    """
    from kgservice.errors import InputFileError

    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputFileError(f"cannot read {path}: {exc.strerror or exc}") from None


@contextmanager
def writing(path: Path | str, what: str) -> Iterator[None]:
    """Around writing ``what`` (an export, a dump) to ``path``: an OS failure becomes a
    :class:`~kgservice.errors.ServiceFileError` naming the file, with the OS error number kept
    (a full disk, a read-only file system), so the boundary can say what to do."""
    from kgservice.errors import ServiceFileError

    try:
        yield
    except ServiceFileError:
        raise
    except OSError as exc:
        raise ServiceFileError(f"cannot write {what} {path}: {exc.strerror or exc}", path=Path(path),
                               errno=exc.errno) from None
