"""Where an answer's cited units come from: each document stating a cited unit, with the line
range and the source lines (the lifecycle's provenance), so a reader can check the claim
against the sentence it was extracted from. An answer lists them as ``doc:lines``, or for a
converted document's page as ``rivers.pdf, page 2, lines 6–7`` (``location``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgservice.parts import Parts


def source_ref(doc: str, lines: Sequence[int] | None) -> str:
    """``notes/tea.md:3-4`` (``:3`` for one line; the bare id without a line range)."""
    if not lines:
        return doc
    a, b = lines[0], lines[1]
    return f"{doc}:{a}" if a == b else f"{doc}:{a}-{b}"


def cited_sources(parts: Parts, unit_ids: Sequence[str]) -> list[dict[str, Any]]:
    """One row per (cited unit, document stating it), in citation order: ``unit``, ``doc``,
    ``lines``, ``snippet``, ``ref``. A unit no document states (ingested before documents
    existed) has one row with the name it was ingested under and no lines. Three store reads
    whatever the number of citations (a fourth for texts not yet split: never the original
    files, each text unpacked once per version, :func:`kgservice.lifecycle.rows.source_documents`)."""
    from kgservice.lifecycle.model import cut_snippet
    from kgservice.lifecycle.place import locate
    from kgservice.lifecycle.rows import source_documents

    ids = list(dict.fromkeys(u.lstrip("#") for u in unit_ids))
    if not ids:
        return []
    store = parts.store
    stated = store.stated_by(ids)
    docs, texts = source_documents(store, sorted({d for ds in stated.values() for d in ds}))
    bare = {u.id: u for u in store.get_units([i for i in ids if not any(d in docs for d in stated.get(i, []))])}
    rows: list[dict[str, Any]] = []
    for uid in ids:
        found = [docs[d] for d in stated.get(uid, []) if d in docs]
        for d in found:
            ln = d.unit_lines.get(uid)
            text = texts.get(d.id)
            place = locate(d, ln, text)
            rows.append({"unit": uid, "doc": d.id, "lines": list(ln) if ln else None, "snippet": cut_snippet(text, ln),
                         "ref": source_ref(d.id, ln), "page": place.page, "page_word": place.page_word,
                         "page_lines": list(place.page_lines) if place.page_lines else None,
                         "section": place.section, "location": place.location})
        if not found and uid in bare and bare[uid].doc:
            rows.append({"unit": uid, "doc": bare[uid].doc, "lines": None, "snippet": None,
                         "ref": bare[uid].doc, "page": None, "page_word": None, "page_lines": None, "section": None,
                         "location": bare[uid].doc})
    return rows


def sources_line(sources: Sequence[dict[str, Any]]) -> str:
    """``sources: a.md:3 (#u1), b.units:7 (#u2)`` — what the CLI prints under an answer; a
    source on a page names it: ``rivers.pdf, page 2, lines 6–7 (#u3)``."""
    return "sources: " + ", ".join(f"{s['location'] if s.get('page') else s['ref']} (#{s['unit']})" for s in sources)
