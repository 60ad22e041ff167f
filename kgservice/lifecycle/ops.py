"""The lifecycle operations over a knowledge base (called through ``KnowledgeBase``): replace a
document's statements, forget documents, retract units, undo a change, read history and
provenance. Each is one atomic ``GraphStore.apply_change``; afterwards the vectors of nodes
no live unit mentions are deleted, new nodes embedded, and this process's caches invalidated
(other servers follow the change log)."""

from __future__ import annotations

import getpass
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, nullcontext
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from kgservice.errors import IngestConflict, InputError
from kgservice.lifecycle.model import ChangeRecord, ChangeResult, DocumentRecord, Lines, Provenance
from kgservice.model import Unit
from kgservice.notation.serializer import format_unit

if TYPE_CHECKING:
    from kgservice.convert.source import Source
    from kgservice.lifecycle.model import PurgeReport
    from kgservice.parts import Parts
    from kgservice.stores.base import GraphStore


_CLAIMS: dict[str, threading.Lock] = {}
_CLAIMS_GUARD = threading.Lock()


@contextmanager
def document_claim(doc_ids: Sequence[str]) -> Iterator[None]:
    """Hold the claim on these documents for one lifecycle change: two replacements (or a
    replacement and a forget) of one document in this process run one after the other, each
    reading the version the other left, so the document never ends with a mix of both. Claims
    are taken in id order (no deadlock between changes of several documents)."""
    with _CLAIMS_GUARD:
        locks = [_CLAIMS.setdefault(d, threading.Lock()) for d in sorted(set(doc_ids))]
    with ExitStack() as stack:
        for lock in locks:
            stack.enter_context(lock)
        yield


def check_version(parts: Parts, doc_id: str, sha256: str, mode: str, expect_version: int | None) -> None:
    """Refuse (:class:`~kgservice.stores.base.IngestConflict`, HTTP 409) a new version of ``doc_id`` based on version
    ``expect_version`` (0: the document did not exist) when the current version is another,
    unless the current version already has this content (the same replacement run again)."""
    if expect_version is None:
        return
    old = next(iter(parts.store.documents([doc_id])), None)
    if old is not None and old.sha256 == sha256 and old.mode == mode:
        return
    current = old.version if old is not None else 0
    if current != expect_version:
        seen = f"version {expect_version}" if expect_version else "no such document"
        now_is = f"version {current}" if current else "forgotten"
        raise IngestConflict(f"document {doc_id!r} changed since the replacement was based on it ({seen}; now "
                               f"{now_is}): nothing was changed; read it again and resubmit")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def who() -> str | None:
    from kgservice.stores.changelog import current_user

    user = current_user()
    if user:
        return user
    try:
        return getpass.getuser()
    except Exception:
        return None


def new_change(kind: str, **kw: object) -> ChangeRecord:
    return ChangeRecord(id="c-" + uuid.uuid4().hex[:12], kind=kind, at=now(), who=who(), **kw)  # type: ignore[arg-type]


def content_key(u: Unit) -> str:
    """What makes two statements the same fact: subject, family, arguments and modifiers (the
    notation without id or provenance)."""
    return format_unit(u, with_id=False)


def _commit(parts: Parts, add: Sequence[Unit], retract: Sequence[str], docs: dict, change: ChangeRecord,
            embed: bool = True, **purge: object) -> tuple[ChangeResult, list[str]]:
    if parts.settings.read_only:
        from kgservice.errors import ReadOnlyError

        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); change refused")
    vectors = parts.node_vectors
    with vectors.owing() if embed else nullcontext():
        report, orphans = parts.store.apply_change(add, retract, docs, change, **purge)  # type: ignore[arg-type]
        if embed and report.new_embeddable_nodes:
            vectors.embed(report.new_embeddable_nodes, known=report.new_labels)
        if orphans:
            with vectors.writer() as vs:
                vs.delete(orphans)
                vs.flush()
    parts.caches.invalidate(sorted(set(report.touched_nodes) | set(orphans)))
    res = ChangeResult(change=change.id, kind=change.kind, docs=list(change.docs), added=len(change.added),
                       unchanged=report.units_unchanged, retracted=len(change.retracted),
                       orphaned_nodes=len(orphans), nodes_added=report.nodes_added,
                       embedded_nodes=len(report.new_embeddable_nodes) if embed else 0,
                       duplicates=dict(report.duplicates),
                       unembedded=[] if embed else list(report.new_embeddable_nodes))
    return res, orphans


def _units_any(parts: Parts, ids: Sequence[str]) -> dict[str, Unit]:
    """Live or archived units by id."""
    got = {u.id: u for u in parts.store.get_units(ids)}
    missing = [i for i in ids if i not in got]
    if missing:
        got.update({i: r.unit for i, r in parts.store.retracted_units(missing).items()})
    return got


def replace_document(parts: Parts, doc_id: str, statements: Sequence[tuple[Unit, Lines | None]], *,
                     title: str, sha256: str, mode: str, size: int, text: str | None,
                     chunks: dict[str, list[str]] | None = None, chunk_lines: dict[str, Lines | None] | None = None,
                     root: str | None = None, embed: bool = True, force: bool = False,
                     source: Source | None = None) -> ChangeResult:
    """Make ``doc_id`` state exactly ``statements`` (this version's units with their lines).
    Units the old version stated with the same content keep their ids (a unit retracted by
    hand stays retracted); a unit whose line keeps its ``#id`` with new content is retracted and
    the new content takes the id; units no longer stated are retracted unless another document
    still states them. The same content again changes nothing (``change`` None) unless ``force``.
    ``embed`` False leaves new nodes without vectors (``kg doctor --repair`` embeds them).
    ``source``: the converted file the text came from (its format, page starts and original
    bytes, kept within ``doc_text_max_bytes``)."""
    doc_id = check_doc_id(doc_id)
    old = next(iter(parts.store.documents([doc_id])), None)
    if old is not None and old.sha256 == sha256 and old.mode == mode and not force:
        return ChangeResult(kind="replace", docs=[doc_id], unchanged=old.units)
    old_units = _units_any(parts, list(old.unit_lines)) if old is not None else {}
    by_key = {content_key(u): uid for uid, u in old_units.items()}
    # A statement whose id the old version stated keeps that id: with the same content the unit
    # is unchanged, with new content (a fact edited in place) the old unit is retracted and the
    # new one takes its id. Any other statement stating an old unit's content keeps that unit's
    # id (content ids of unnamed units, an id renamed), unless a statement claims it by name.
    named = {u.id for u, _ in statements if u.id in old_units}
    edited = {u.id for u, _ in statements if u.id in old_units and content_key(u) != content_key(old_units[u.id])}
    lines: dict[str, Lines | None] = {}
    add: list[Unit] = []
    remap: dict[str, str] = {}
    for u, ln in statements:
        if u.id in named:
            kept = None if u.id in edited else u.id
        else:
            kept = by_key.get(content_key(u))
            kept = None if kept in named else kept
        uid = kept or u.id
        remap[u.id] = uid
        if uid not in lines:
            lines[uid] = ln
            if kept is None:
                add.append(u)
    dropped = [uid for uid in (old.unit_lines if old is not None else {}) if uid not in lines or uid in edited]
    others = parts.store.stated_by(dropped)
    retract = [u for u in dropped if not [d for d in others.get(u, []) if d != doc_id]]
    shared_edits = sorted(edited - set(retract))
    if shared_edits:
        uid = shared_edits[0]
        raise IngestConflict(
            f"unit #{uid} is edited in {doc_id} but {', '.join(d for d in others.get(uid, []) if d != doc_id)} "
            f"still states its old content ({content_key(old_units[uid]).splitlines()[0]!r}); nothing was "
            "changed: give the new fact another id, or change both documents")
    shared = len(dropped) - len(retract)
    cap = parts.settings.doc_text_max_bytes
    text_z, cut = DocumentRecord.pack_text(text, cap) if text is not None else (None, False)
    original_z = DocumentRecord.pack_original(source.original, cap) if source and source.original else None
    rec = DocumentRecord(id=doc_id, title=title, sha256=sha256, mode=mode, size=size,
                         version=(old.version + 1) if old is not None else 1, who=who(), when=now(),
                         units=len(lines), text_stored=text_z is not None, text_truncated=cut, text_z=text_z,
                         unit_lines=lines, root=root,
                         chunks={h: [remap.get(u, u) for u in us] for h, us in (chunks or {}).items()},
                         chunk_lines=dict(chunk_lines or {}),
                         format=source.format if source else None, pages=list(source.pages) if source else [],
                         original_z=original_z, original_stored=original_z is not None)
    change = new_change("replace" if old is not None else "ingest", docs=[doc_id],
                        docs_before={doc_id: old}, docs_after={doc_id: rec})
    res, _ = _commit(parts, add, retract, {doc_id: rec}, change, embed=embed)
    res.kept_shared = shared
    res.unchanged = len(lines) - res.added
    return res


def check_doc_id(doc_id: str) -> str:
    """The id normalised (no leading ``./``), or an InputError. A backslash is kept: it is the
    escape :func:`kgservice.notation.doc_name` writes for a file name's bytes that are not text."""
    d = doc_id.strip()
    while d.startswith("./"):
        d = d[2:]
    if not d or d.startswith("/") or any(p == ".." for p in d.split("/")):
        raise InputError(f"document id {doc_id!r} must be a relative path inside the ingested folder "
                         "(no leading /, no ..)")
    return d


def get_documents(store: GraphStore, ids: Sequence[str]) -> list[DocumentRecord]:
    """The documents' records in the order asked; an unknown id is an input error naming it."""
    docs = {d.id: d for d in store.documents(ids)}
    unknown = [i for i in ids if i not in docs]
    if unknown:
        raise InputError(f"no document {', '.join(map(repr, unknown))} in the knowledge base (`kg docs list`)")
    return [docs[i] for i in ids]


def forget_documents(parts: Parts, doc_ids: Sequence[str]) -> ChangeResult:
    """:func:`forget` holding the documents' claims (:func:`document_claim`), as every caller
    outside a change already holding them does."""
    with document_claim(list(doc_ids)):
        return forget(parts, doc_ids)


def forget(parts: Parts, doc_ids: Sequence[str]) -> ChangeResult:
    """Remove documents; their units leave the graph unless another document states them."""
    docs = get_documents(parts.store, list(dict.fromkeys(doc_ids)))
    names = {d.id for d in docs}
    units = sorted({u for d in docs for u in d.unit_lines})
    others = parts.store.stated_by(units)
    retract = [u for u in units if not [x for x in others.get(u, []) if x not in names]]
    change = new_change("forget", docs=sorted(names), docs_before={d.id: d for d in docs},
                        docs_after={d.id: None for d in docs})
    res, _ = _commit(parts, [], retract, {d.id: None for d in docs}, change)
    res.kept_shared = len(units) - len(retract)
    return res


def retract(parts: Parts, unit_ids: Sequence[str], reason: str) -> ChangeResult:
    """Take units out of the graph by hand (kept in the archive with the reason)."""
    ids = list(dict.fromkeys(u.lstrip("#") for u in unit_ids))
    if not ids:
        raise InputError("a retraction needs at least one unit id (unit_ids is empty)")
    if not reason or not reason.strip():
        raise InputError("a retraction needs a reason (--reason TEXT)")
    live = {u.id for u in parts.store.get_units(ids)}
    unknown = [u for u in ids if u not in live]
    if unknown:
        gone = parts.store.retracted_units(unknown)
        raise InputError("; ".join(f"unit #{u} is already retracted (change {gone[u].change})" if u in gone
                                   else f"no unit #{u} in the graph" for u in unknown))
    change = new_change("retract", units=ids, reason=reason.strip())
    return _commit(parts, [], ids, {}, change)[0]


def find_change(parts: Parts, change_id: str) -> tuple[ChangeRecord, list[ChangeRecord]]:
    changes = parts.store.changes()
    for c in changes:
        if c.id == change_id:
            return c, changes
    raise InputError(f"no change {change_id!r} in the history (`kg history`)")


def undo(parts: Parts, change_id: str) -> ChangeResult:
    """The inverse change: the units it retracted are live again, the units it added leave
    (unless a document outside it states them), its documents are as before it."""
    c, changes = find_change(parts, change_id)
    if c.kind == "purge":
        raise InputError(f"change {change_id} is a purge: what it deleted is gone for good")
    done = [x.id for x in changes if x.undoes == c.id]
    if done:
        raise InputError(f"change {change_id} was undone already by {done[-1]} (undo that to redo it)")
    archived = parts.store.retracted_units(c.retracted)
    purged = [u for u in c.retracted if u not in archived and not parts.store.get_units([u])]
    if purged:
        raise InputError(f"change {change_id} cannot be undone: {len(purged)} unit(s) it retracted were purged "
                         f"(e.g. #{purged[0]})")
    restore = [archived[u].unit for u in c.retracted if u in archived]
    docs = dict(c.docs_before)
    # an id both retracted and added by the change was edited in place: its new version goes
    # although the documents before the change state the id (they state the old version)
    keep = {u for d in docs.values() if d is not None for u in d.unit_lines} - set(c.retracted)
    others = parts.store.stated_by(c.added)
    retract_ids = [u for u in c.added if u not in keep and not [d for d in others.get(u, []) if d not in docs]]
    change = new_change("undo", docs=list(c.docs), units=list(c.units), undoes=c.id,
                        docs_before=dict(c.docs_after), docs_after=docs)
    return _commit(parts, restore, retract_ids, docs, change)[0]


def history(parts: Parts, target: str | None = None) -> list[ChangeRecord]:
    """Changes, oldest first; with ``target`` those about that document or unit (unknown: error)."""
    changes = parts.store.changes()
    if target is None:
        return changes
    t = target.lstrip("#")
    out = [c for c in changes if target in c.docs or t in c.units or t in c.added or t in c.retracted]
    if not out and not parts.store.documents([target]) and not parts.store.get_units([t]) \
            and not parts.store.retracted_units([t]):
        raise InputError(f"no document or unit {target!r} in the knowledge base")
    return out


def provenance(parts: Parts, unit_id: str) -> list[Provenance]:
    """Each document stating the unit, with its lines, their text and where they are (the
    records read as an answer's sources are: no original files, texts split once per version)."""
    from kgservice.lifecycle.model import cut_snippet
    from kgservice.lifecycle.place import locate
    from kgservice.lifecycle.rows import source_documents

    uid = unit_id.lstrip("#")
    docs, texts = source_documents(parts.store, parts.store.stated_by([uid]).get(uid, []))
    out = []
    for d in docs.values():
        ln = d.unit_lines.get(uid)
        text = texts.get(d.id)
        place = locate(d, ln, text)
        out.append(Provenance(doc=d.id, lines=ln, snippet=cut_snippet(text, ln), **place.model_dump()))
    return out


def purge(parts: Parts, before: str, *, yes: bool) -> PurgeReport:
    """Delete for good the units retracted before ``before`` (ISO date) and the texts of
    documents forgotten before it; nothing of them is in a later dump."""
    from kgservice.lifecycle.model import PurgeReport

    if not yes:
        raise InputError("purge deletes retracted units and forgotten texts for good; give --yes to do it")
    try:
        cut = datetime.fromisoformat(before)
    except ValueError:
        raise InputError(f"--retracted-before {before!r} is not a date (YYYY-MM-DD)") from None
    cut_s = (cut if cut.tzinfo else cut.replace(tzinfo=timezone.utc)).isoformat(timespec="seconds")
    units = [u for u, r in parts.store.retracted_units().items() if r.at < cut_s]
    texts: dict[str, list[str]] = {}
    for c in parts.store.changes():
        if c.at < cut_s:
            gone = [d for d, r in c.docs_before.items() if r is not None and r.text_z is not None
                    and c.docs_after.get(d) is None]
            gone += [d for d, r in c.docs_after.items() if r is not None and r.text_z is not None
                     and not parts.store.documents([d])]
            if gone:
                texts[c.id] = sorted(set(gone))
    change = new_change("purge", units=units, reason=f"retracted before {cut_s}")
    if units or texts:
        _commit(parts, [], [], {}, change, purge_units=units, purge_texts=texts)
    return PurgeReport(units=len(units), documents=sum(map(len, texts.values())), before=cut_s)
