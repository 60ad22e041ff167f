"""Batch validation shared by every backend: a batch is checked whole before anything is written."""

from __future__ import annotations

import re
import gc
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone

from kgservice.families.lexicon import ALL_KINDS
from kgservice.model import Mod, Unit, Value
from kgservice.notation.serializer import format_unit
from kgservice.errors import IngestConflict
from kgservice.stores.facts import _lid, _nid  # node_id / literal_id, memoised (pure functions)


# Every text a store indexes must fit Neo4j's index key limit (~8 KB; "Property value is too
# large to index") on both backends alike, be encodable as UTF-8 (no lone surrogates) and
# carry no control characters (they break the one-line notation and terminals).
MAX_TEXT_BYTES = 4000
UNIT_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:\-]*\Z")  # the notation's '#id' (kgservice.notation.parser)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")  # Unicode Cc except TAB
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Why a label / id / slot cannot be stored, or None."""
    if not text.strip():
        return "is empty"
    m = _SURROGATE.search(text)
    if m:
        return f"is not valid Unicode (lone surrogate U+{ord(m.group()):04X} at position {m.start() + 1})"
    m = _CONTROL.search(text)
    if m:
        return f"contains control character U+{ord(m.group()):04X} at position {m.start() + 1}"
    if len(text) * 4 > MAX_TEXT_BYTES and len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        return f"is {len(text.encode('utf-8'))} bytes of UTF-8, over the {MAX_TEXT_BYTES}-byte limit for an indexed label"
    return None


_BODY_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")  # C0 controls and DEL, whitespace (TAB LF VT FF CR) allowed


def text_body_problem(text: str) -> str | None:
    """Why a document text cannot be ingested, or None: extraction writes it to a UTF-8 file
    and the labels it yields come from it, so lone surrogates and control characters (NUL,
    ESC, ...) would fail or be refused later, after the work was queued."""
    m = _SURROGATE.search(text)
    if m:
        return f"is not valid Unicode (lone surrogate U+{ord(m.group()):04X} at character {m.start() + 1})"
    m = _BODY_CONTROL.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        return f"contains control character U+{ord(m.group()):04X} at line {line}, character {m.start() + 1}"
    return None


def _text_ok(text: str | None) -> bool:
    """A cheap sufficient test for ``text_problem(text or "") is None``: printable text has no
    control characters (Cc) and no lone surrogates (Cs); False means "ask text_problem"."""
    if not text:
        return False
    return text.isprintable() and len(text) * 4 <= MAX_TEXT_BYTES and not text.isspace()


def _unit_ok(u: Unit) -> bool:
    """True when :func:`unit_text_problems` has nothing to say (checked without building messages)."""
    d = u.__dict__
    match = UNIT_ID.match
    uid = d["id"]
    if len(uid) > 200 or not match(uid):
        return False
    for ref in d["supersedes"]:
        if len(ref) > 200 or not match(ref):
            return False
    if d["kind"] not in ALL_KINDS:
        return False
    if not (_text_ok(d["subject"]) and _text_ok(d["predicate"]) and _text_ok(d["family"])):
        return False
    for a in d["args"]:
        v = a.__dict__
        if not _text_ok(v["node"] if v["node"] is not None else v["literal"]):
            return False
    for m in d["mods"]:
        v = m.value.__dict__
        if not _text_ok(m.slot):
            return False
        if v["unit"] is None:
            if not _text_ok(v["node"] if v["node"] is not None else v["literal"]):
                return False
        elif len(v["unit"]) > 200 or not match(v["unit"]):
            return False
    return d["doc"] is None or _text_ok(d["doc"])


def unit_text_problems(u: Unit) -> list[str]:
    """Texts of one unit that no backend could store faithfully."""
    if _unit_ok(u):  # the common case, about 5x cheaper than collecting messages
        return []
    out: list[str] = []
    ids = [("unit id", u.id)] + [("supersedes reference", s) for s in u.supersedes]
    ids += [("modifier #unit reference", m.value.unit) for m in u.mods if m.value.unit is not None]
    for what, uid in ids:
        if not UNIT_ID.match(uid) or len(uid) > 200:
            out.append(f"{what} {uid[:80]!r} is not a valid unit id (letters, digits, _ - . : ; at most 200)")
    texts: list[tuple[str, str | None]] = [("subject", u.subject), ("predicate", u.predicate), ("family", u.family)]
    for i, a in enumerate(u.args, 1):
        if a.unit is not None:
            out.append(f"unit #{u.id[:80]!r}: argument {i} is a #unit reference; arguments are nodes or literals")
        else:
            texts.append((f"argument {i}", a.node if a.node is not None else a.literal))
    for m in u.mods:
        texts.append(("modifier slot", m.slot))
        if m.value.unit is None:
            texts.append((f"modifier [{m.slot[:40]}] value", m.value.node if m.value.node is not None else m.value.literal))
    if u.doc is not None:
        texts.append(("doc", u.doc))
    shown = u.id[:80] if UNIT_ID.match(u.id) else repr(u.id[:80])
    if u.kind not in ALL_KINDS:
        out.append(f"unit #{shown}: family kind {u.kind[:40]!r} is not one of {', '.join(ALL_KINDS)}")
    for what, text in texts:
        why = text_problem(text or "")
        if why:
            out.append(f"unit #{shown}: {what} {why}")
    if out and u.doc and text_problem(u.doc) is None:  # a batch spans files: say which one
        out = [f"{msg} (in {u.doc})" for msg in out]
    return out


@contextmanager
def paused_gc() -> Iterator[None]:
    """Hold off the cyclic garbage collector for a bulk step.

    Ingest and load create millions of small, acyclic objects (tuples, strings, model
    instances); every few hundred allocations the collector would otherwise walk the whole
    growing heap again, which made it the largest cost of a batch. Nothing here creates
    cycles, and the previous collector state is restored (nesting is fine)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _stamped(unit: Unit, stamp: str) -> Unit:
    """``unit.model_copy(update={"ingested_at": stamp})``, minus pydantic's generic copy path."""
    copy = unit.__class__.__new__(unit.__class__)
    setattr_ = object.__setattr__
    setattr_(copy, "__dict__", {**unit.__dict__, "ingested_at": stamp})
    setattr_(copy, "__pydantic_extra__", None if unit.__pydantic_extra__ is None else dict(unit.__pydantic_extra__))
    setattr_(copy, "__pydantic_fields_set__", unit.__pydantic_fields_set__ | {"ingested_at"})
    private = getattr(unit, "__pydantic_private__", None)
    setattr_(copy, "__pydantic_private__", None if private is None else dict(private))
    return copy


def canonical(unit: Unit) -> str:
    """What makes two units "the same fact": their notation, without provenance fields."""
    return format_unit(unit)


def fact_key(u: Unit) -> tuple:
    """What makes two units with different ids the same fact (DESIGN §3's merge step): the
    subject node, the family-resolved predicate (kind, family base, direction) and the
    arguments as node / literal ids. Modifier rows, provenance and the id do not count."""
    args = tuple(("n", _nid(a.node)) if a.node is not None else ("l", _lid(a.literal or ""))
                 for a in u.args)
    return (_nid(u.subject), u.kind, u.family, u.inverse, args)


def fact_probe(u: Unit) -> tuple[str, str]:
    """(subject node id, argument-0 node or literal id): two units with the same
    :func:`fact_key` share these, so a store can look duplicates up by them (Neo4j indexes
    both as edges of the unit) instead of reading every unit about the subject.

    >>> from kgservice.model import Value
    >>> fact_probe(Unit(id="a", subject="Cat", predicate="is a", family="is a", kind="belongs_to",
    ...                 args=(Value(node="Mammal"),)))
    ('cat', 'mammal')
    """
    a = u.args[0]
    return _nid(u.subject), _nid(a.node) if a.node is not None else _lid(a.literal or "")


def prepare_batch(
    units: Sequence[Unit],
    existing: Callable[[Iterable[str]], dict[str, Unit]],
    live_about: Callable[[list[str]], Iterable[Unit]] | None = None,
    duplicates: dict[str, str] | None = None,
    aliases: Callable[[list[str]], dict[str, str]] | None = None,
    *,
    stamp: bool = True,
    archived: Callable[[list[str]], set[str]] | None = None,
) -> tuple[list[Unit], int]:
    """Return (new units stamped with ingested_at, number already stored unchanged).
    ``stamp=False``: the new units as given, for a store that writes :func:`ingest_stamp`
    into its own records (copying every model to set one field is wasted work
    there).

    With ``live_about`` (subject node ids -> the stored live units about them) and a
    ``duplicates`` dict, a new unit stating the same fact (:func:`fact_key`) as a live stored
    unit, or as an earlier unit of the batch, is not added: ``duplicates[its id]`` names the
    unit it duplicates. A unit that supersedes another is an update, never a duplicate.

    ``aliases`` (ids -> {merged-away id: the unit it was merged into}, for those that are
    such aliases) is how a store remembers earlier merges, so they stay meaningful later: a
    ``supersedes`` or modifier ``#unit`` reference to an alias is rewritten to the unit it
    names (that unit is then superseded as usual; the stored unit carries the resolved id),
    and a batch unit whose id is an alias is reported as a duplicate again (nothing added)
    when it still states the same fact, or rejected when it states another one.

    Raises :class:`IngestConflict` naming each problem: an id reused for a different fact,
    a ``supersedes`` reference to a unit that exists nowhere, a supersession cycle.

    ``archived`` (ids -> those that are retracted units in the store's archive): a reference
    to one is known, not dangling - a live unit that superseded a unit later retracted keeps
    its ``supersedes``, so the store (and a dump of it) holds such units.
    """
    problems: list[str] = []
    by_id: dict[str, Unit] = {}
    for u in units:
        problems.extend(unit_text_problems(u))
    if problems:  # nothing else is meaningful (and ids may not even be valid keys)
        raise IngestConflict("batch rejected, nothing stored:\n  " + "\n  ".join(problems[:50])
                             + (f"\n  ... and {len(problems) - 50} more" if len(problems) > 50 else ""))
    for u in units:
        prev = by_id.get(u.id)
        if prev is not None and canonical(prev) != canonical(u):
            problems.append(f"unit #{u.id} appears twice in the batch with different content")
        by_id.setdefault(u.id, u)
    refs = {u.id: [m.value.unit for m in u.mods if m.value.unit is not None] for u in by_id.values()}
    stored = existing(list(by_id) + [s for u in by_id.values() for s in u.supersedes]
                      + [r for rs in refs.values() for r in rs])
    if aliases is not None:
        _resolve_aliases(by_id, refs, stored, existing, aliases, duplicates, problems)
    new: list[Unit] = []
    unchanged = 0
    for uid, u in by_id.items():
        old = stored.get(uid)
        if old is None:
            new.append(u)
        elif canonical(old) == canonical(u):
            unchanged += 1
        else:
            problems.append(
                f"unit #{uid} already exists with different content (from {old.doc or 'unknown doc'}): "
                f"{canonical(old).splitlines()[0]!r}; give the new fact another id"
            )
    missing = {r for u in new for r in [*u.supersedes, *refs[u.id]] if r not in by_id and r not in stored}
    known = archived(sorted(missing)) if archived is not None and missing else set()
    for u in new:
        for ref in u.supersedes:
            if ref == u.id:
                problems.append(f"unit #{u.id} supersedes itself")
            elif ref not in by_id and ref not in stored and ref not in known:
                problems.append(f"unit #{u.id} supersedes #{ref}, which is neither in this batch nor stored")
        for ref in refs[u.id]:
            if ref not in by_id and ref not in stored and ref not in known:
                problems.append(f"unit #{u.id} refers to #{ref} in a modifier row, which is neither in this batch nor stored")
    if live_about is not None and duplicates is not None and new:
        new = _merge_duplicates(new, live_about, duplicates)
    problems.extend(_cycles({u.id: u.supersedes for u in new if u.supersedes}))  # the others end every path
    if problems:
        raise IngestConflict("batch rejected, nothing stored:\n  " + "\n  ".join(problems))
    if not stamp:
        return new, unchanged
    now = ingest_stamp()
    return [u if u.ingested_at else _stamped(u, now) for u in new], unchanged


def ingest_stamp() -> str:
    """``ingested_at`` of the units a batch adds (those that come without one)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _resolve_aliases(by_id: dict[str, Unit], refs: dict[str, list[str]], stored: dict[str, Unit],
                     existing: Callable[[Iterable[str]], dict[str, Unit]],
                     aliases: Callable[[list[str]], dict[str, str]],
                     duplicates: dict[str, str] | None, problems: list[str]) -> None:
    """Apply the store's merge memory to a batch (see :func:`prepare_batch`), in place: a batch
    unit re-stating a merged-away id is taken out (a duplicate again, or a problem), and
    references to merged-away ids are pointed at the units they were merged into. Only ids
    that are neither stored nor in the batch can be aliases, so only those are asked about."""
    asked = [i for i in by_id if i not in stored]
    asked += [r for u in by_id.values() for r in (*u.supersedes, *refs[u.id]) if r not in by_id and r not in stored]
    known = aliases(list(dict.fromkeys(asked))) if asked else {}
    if not known:
        return
    missing = [k for k in dict.fromkeys(known.values()) if k not in stored]
    if missing:
        stored.update(existing(missing))
    for uid in [i for i in by_id if i in known]:
        u = by_id.pop(uid)
        del refs[uid]
        kept = known[uid]
        target = stored.get(kept) or by_id.get(kept)  # the batch may state the unit it names again
        if target is not None and not u.supersedes and fact_key(u) == fact_key(target):
            if duplicates is not None:
                duplicates[uid] = kept
        else:
            problems.append(f"unit #{uid} was merged into #{kept} as a duplicate of it, so the id cannot now "
                            "state another fact or an update; give the new fact another id")
    for uid, u in list(by_id.items()):
        if any(r in known and r not in by_id for r in (*u.supersedes, *refs[uid])):
            def to(ref: str) -> str:
                return known[ref] if ref in known and ref not in by_id else ref
            mods = tuple(m if m.value.unit is None else Mod(slot=m.slot, value=Value(unit=to(m.value.unit)))
                         for m in u.mods)
            u = by_id[uid] = u.model_copy(update={"supersedes": tuple(dict.fromkeys(map(to, u.supersedes))),
                                                  "mods": mods})
            refs[uid] = [m.value.unit for m in u.mods if m.value.unit is not None]


def _merge_duplicates(new: list[Unit], live_about: Callable[[list[str]], Iterable[Unit]],
                      duplicates: dict[str, str]) -> list[Unit]:
    referenced = {r for u in new for r in u.supersedes} | {m.value.unit for u in new for m in u.mods if m.value.unit}
    about = Counter(_nid(u.subject) for u in new)
    seen: dict[tuple, str] = {}
    for old in live_about(sorted(about)):
        seen.setdefault(fact_key(old), old.id)
    stored_about = {key[0] for key in seen}  # fact_key starts with the subject id
    kept = []
    for u in new:
        subject = _nid(u.subject)
        if about[subject] == 1 and subject not in stored_about:
            kept.append(u)  # the only fact about its subject: nothing to compare with (most units)
            continue
        key = fact_key(u)
        first = seen.get(key)
        if first is not None and not u.supersedes and u.id not in referenced:
            duplicates[u.id] = first
            continue
        seen.setdefault(key, u.id)
        kept.append(u)
    return kept


def _cycles(supersedes: dict[str, tuple[str, ...]]) -> list[str]:
    """Supersession cycles among new units (stored units can only point at stored units)."""
    state: dict[str, int] = {}
    found: list[str] = []

    def visit(uid: str, path: list[str]) -> None:
        state[uid] = 1
        for ref in supersedes.get(uid, ()):
            if ref not in supersedes or ref == uid:
                continue
            if state.get(ref) == 1:
                cyc = path[path.index(ref):] + [ref] if ref in path else [uid, ref]
                found.append("supersession cycle: " + " -> ".join(f"#{c}" for c in cyc))
            elif ref not in state:
                visit(ref, path + [ref])
        state[uid] = 2

    for uid in sorted(supersedes):
        if uid not in state:
            visit(uid, [uid])
    return found
