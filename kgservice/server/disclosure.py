"""What of the server's file system a reply may show: no absolute server path leaves the server,
except to an admin who asks for it.

Why: a path names the server's layout (user names, mount points, where the data and its backups
live), which a reader key, an unauthenticated ``/readyz`` or a copied error message has no use for.
The library keeps absolute paths in its records and messages (the CLI prints them to the user who
runs it, on the machine they belong to); the server's boundaries pass what they send through here:

* :func:`redact` rewrites the data directory (``<data dir>``), the server's working directory
  (``<server dir>``) and the home directory (``~``) in a message: error envelopes, ``/readyz``,
  MCP tool errors, the web page's Doctor report;
* :func:`document_fields` leaves a document's ``root`` (the folder ``kg sync`` mirrors it from)
  out of a listing, unless an admin asked for paths (``?paths=true`` on ``GET /v1/documents``).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from kgservice.config import Settings


@lru_cache(maxsize=8)
def _prefixes(data_dir: str, cwd: str, home: str) -> tuple[tuple[str, str], ...]:
    """(absolute path, what it is shown as), longest first (the data dir inside the working
    directory is named as the data dir)."""
    out: dict[str, str] = {}
    data = Path(data_dir)
    for form in {str(data.absolute()), str(data.resolve())}:
        out[form] = "<data dir>"
    for form in {cwd, str(Path(cwd).resolve())}:
        out.setdefault(form, "<server dir>")
    if home and home != "/":
        out.setdefault(home, "~")
    return tuple(sorted(((p, name) for p, name in out.items() if p not in ("", "/")), key=lambda x: -len(x[0])))


def redact(text: str, settings: Settings) -> str:
    """``text`` with the server's absolute paths named instead of spelled out (a path counts where
    it ends at a separator or the end of a name: ``/root`` is not ``/rootless``)."""
    if "/" not in text and "\\" not in text:
        return text
    for path, name in _prefixes(str(settings.data_dir), os.getcwd(), os.path.expanduser("~")):
        if path in text:
            text = re.sub(re.escape(path) + r"(?![^/\\\s'\"(),;:\]\[])", lambda _m: name, text)  # re.sub calls it before the loop moves on
    return text


def redact_all(value: Any, settings: Settings) -> Any:
    """:func:`redact` over every string of a JSON-like value (a report, a checks table)."""
    if isinstance(value, str):
        return redact(value, settings)
    if isinstance(value, dict):
        return {k: redact_all(v, settings) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_all(v, settings) for v in value]
    return value


def document_fields(fields: dict[str, Any], *, show_paths: bool) -> dict[str, Any]:
    """A document's listing fields as a reply: ``root`` is an absolute server path, so it is null
    unless an admin asked for paths (the caller checks the role)."""
    if not show_paths and fields.get("root") is not None:
        return {**fields, "root": None}
    return fields
