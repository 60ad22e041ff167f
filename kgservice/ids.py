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
    """NFKC, case-fold, collapse inner whitespace, strip ends.

    Examples
    --------
    >>> normalise_label("  Lung \\t CANCER ")
    'lung cancer'
    >>> normalise_label("Ｐｙｔｈｏｎ　３")  # full-width letters, digit and space (NFKC)
    'python 3'
    >>> normalise_label("Straße")  # case-folding, not just lower()
    'strasse'
    """
    text = unicodedata.normalize("NFKC", label)
    text = text.casefold()
    return _WS.sub(" ", text).strip()


def node_id(label: str) -> str:
    """Id of an entry or derived node ``{label}``.

    The same text typed at query time lands on the node written at ingest time. Injective next
    to :func:`literal_id`: ``{lit:high}`` must not become the literal ``(high)``'s id, so an id
    that would start with ``lit:`` (or with the escape ``ent:`` itself) gets ``ent:`` in front;
    every other label is its normalised text.

    >>> node_id("Lung Cancer") == node_id("lung  cancer") == "lung cancer"
    True
    >>> node_id("lit:high"), literal_id("high")
    ('ent:lit:high', 'lit:high')
    """
    nid = normalise_label(label)
    if nid.startswith(LITERAL_PREFIX) or nid.startswith(ENTRY_ESCAPE):
        return ENTRY_ESCAPE + nid
    return nid


def literal_id(text: str) -> str:
    """Id of a literal ``(text)``; prefixed so ``(high)`` never collides with ``{high}``.

    >>> literal_id("High"), node_id("High")
    ('lit:high', 'high')
    >>> is_literal_id(literal_id("1989")), is_literal_id(node_id("1989"))
    (True, False)
    """
    return LITERAL_PREFIX + normalise_label(text)


def is_literal_id(nid: str) -> bool:
    return nid.startswith(LITERAL_PREFIX)


def content_unit_id(canonical_text: str) -> str:
    """Stable id for a unit written without ``#id``: re-ingesting the same fact is a no-op.

    >>> content_unit_id("x")  # "u-" + the first 12 hex digits of sha1("x")
    'u-11f6ad8ec52a'
    """
    digest = hashlib.sha1(canonical_text.encode("utf-8")).hexdigest()[:12]
    return f"u-{digest}"
