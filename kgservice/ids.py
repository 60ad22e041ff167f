"""Node identity: one normalisation shared by ingest and query (DESIGN invariant 1).

A label typed at query time must land on the same node as the label written at ingest
time, so every path that turns text into a node id goes through :func:`node_id`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_WS = re.compile(r"\s+")
LITERAL_PREFIX = "lit:"
ENTRY_ESCAPE = "ent:"  # prefixed to an entry id that would otherwise start like a literal's


def normalise_label(label: str) -> str:
    """NFKC, case-fold, collapse inner whitespace, strip ends."""
    text = unicodedata.normalize("NFKC", label)
    text = text.casefold()
    return _WS.sub(" ", text).strip()


def node_id(label: str) -> str:
    """Id of an entry or derived node ``{label}``.

    Injective next to :func:`literal_id`: ``{lit:high}`` must not become the literal ``(high)``'s
    id, so an id that would start with ``lit:`` (or with the escape ``ent:`` itself) gets ``ent:``
    in front; every other label is its normalised text, as before."""
    nid = normalise_label(label)
    if nid.startswith(LITERAL_PREFIX) or nid.startswith(ENTRY_ESCAPE):
        return ENTRY_ESCAPE + nid
    return nid


def literal_id(text: str) -> str:
    """Id of a literal ``(text)``; prefixed so ``(high)`` never collides with ``{high}``."""
    return LITERAL_PREFIX + normalise_label(text)


def is_literal_id(nid: str) -> bool:
    return nid.startswith(LITERAL_PREFIX)


def content_unit_id(canonical_text: str) -> str:
    """Stable id for a unit written without ``#id``: re-ingesting the same fact is a no-op."""
    digest = hashlib.sha1(canonical_text.encode("utf-8")).hexdigest()[:12]
    return f"u-{digest}"
