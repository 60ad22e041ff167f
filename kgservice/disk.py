"""Disk helpers shared by every layer that writes files: free-space probes for the layers that
refuse to write near a full disk (the vector store's memory-mapped files, ``kg salvage``'s copy
of a damaged store), one definition so they agree on which file system they measure; and the
directory sync that makes a file's creation, rename or removal durable."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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
