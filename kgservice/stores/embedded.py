"""The embedded graph store: in process, persisted as a snapshot plus an append-only journal.

Zero setup for one user. The graph is held in plain dictionaries (adjacency lists per
relation kind, reverse indexes as sorted lists, units as compact tuples that become
:class:`~kgservice.model.Unit` models only when read), which keeps a million units in
well under a gigabyte and makes a batch cost proportional to the batch, not the store.

On disk, under the data directory:

* ``graph.pkl`` — the snapshot: ``(FORMAT_VERSION, state)`` pickled, ``state`` being plain
  dicts, lists, tuples and strings (no classes), including the *epoch* of the journal
  that continues it.
* ``graph.journal`` — a header naming its epoch, then one framed record (length, CRC32,
  pickled compact units + their facts) per ingested batch, fsynced before the batch
  counts as stored. A record that did not reach the disk whole (crash mid-append) is
  ignored on load and cut off by the next writer; a bad record followed by good ones is
  corruption and is reported, never silently dropped.
* When the journal grows past half the snapshot's size (and a 16 MB floor), the writer compacts:
  a new snapshot with a fresh epoch (temp file, fsync, rename), then an empty journal
  for that epoch. A journal whose epoch does not match the snapshot is stale (its
  batches are already in the snapshot) and is ignored.

Writes are serialised across processes by an exclusive lock on the data directory; a
writer first catches up on what other processes appended (replaying only the new journal
records, or reloading if the snapshot was replaced), so two CLI runs never overwrite each
other's units. Format 1 snapshots (a pickled networkx state) are read and migrated on
the next write.
"""

from __future__ import annotations

import fcntl
import io
import os
import pickle
import struct
import sys
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kgservice.caches.changelog import record_embedded_change
from kgservice.families import RELATION_KINDS
from kgservice.ids import is_literal_id
from kgservice.model import IngestReport, Mod, Node, NodeKind, Unit, Value
from kgservice.stores.base import MAX_CLOSURE_DEPTH, GraphStore, IndexRows, StoreError
from kgservice.stores.facts import unit_facts
from kgservice.stores.validate import paused_gc, prepare_batch

SNAPSHOT = "graph.pkl"
JOURNAL = "graph.journal"
FORMAT_VERSION = 2
BIDIRECTIONAL = {"synonym", "belongs_to", "of", "related_to"}
EDGE_KINDS = (*RELATION_KINDS, "superseded", "narrowed_by")
_SPREAD_OUT = tuple(RELATION_KINDS)  # content forward only; the others both ways
_SPREAD_IN = tuple(k for k in RELATION_KINDS if k in BIDIRECTIONAL)
_RELATION_SET = frozenset(RELATION_KINDS)

_JOURNAL_MAGIC = b"KGJOURNAL2\n"
_NO_EPOCH = "0" * 32  # the epoch of a journal that starts from an empty store
_HEADER = len(_JOURNAL_MAGIC) + 33  # magic + 32 hex chars + "\n"
_FRAME = struct.Struct(">4sII")  # b"KGJR", payload length, crc32(payload)
_FRAME_TAG = b"KGJR"
COMPACT_MIN_BYTES = 16 << 20  # never compact a journal smaller than this

_KIND = {"entry": "entry", "derived": "derived", "literal": "literal"}  # canonical (shared) strings
_NODE_KIND = {k.value: k for k in NodeKind}
_UNIT_FIELDS = tuple(Unit.model_fields)
_obj_set = object.__setattr__


# -- compact unit records --------------------------------------------------------------
# (id, subject, predicate, family, kind, inverse, args, mods, supersedes, doc, mode, ingested_at)
# args: a node value is its text (str); a literal is ("l", text), a unit ref ("u", text).
# mods: (slot, value) with value encoded the same way.

def _enc(v: Value) -> Any:
    d = v.__dict__
    if d["node"] is not None:
        return d["node"]
    if d["literal"] is not None:
        return ("l", d["literal"])
    return ("u", d["unit"])


def _model(cls: type, values: dict[str, Any], fields_set: set[str] | None = None) -> Any:
    """What ``cls.model_construct(**values)`` builds, without its per-field loop (no aliases,
    extras or private attributes on these models)."""
    m = cls.__new__(cls)
    _obj_set(m, "__dict__", values)
    _obj_set(m, "__pydantic_fields_set__", set(values) if fields_set is None else fields_set)
    _obj_set(m, "__pydantic_extra__", None)
    _obj_set(m, "__pydantic_private__", None)
    return m


def _dec(x: Any) -> Value:
    """The Value a validated ``Value(node=...)`` / ``(literal=...)`` / ``(unit=...)`` is."""
    if isinstance(x, str):
        return _model(Value, {"node": x, "literal": None, "unit": None}, {"node"})
    tag, text = x
    if tag == "l":
        return _model(Value, {"node": None, "literal": text, "unit": None}, {"literal"})
    return _model(Value, {"node": None, "literal": None, "unit": text}, {"unit"})


def _unit_from(rec: tuple) -> Unit:
    (uid, subject, predicate, family, kind, inverse, args, mods, supersedes, doc, mode, ingested_at) = rec
    return _model(Unit, {
        "id": uid, "subject": subject, "predicate": predicate, "family": family, "kind": kind,
        "inverse": inverse, "args": tuple(_dec(a) for a in args),
        "mods": tuple(_model(Mod, {"slot": s, "value": _dec(v)}) for s, v in mods),
        "supersedes": supersedes, "doc": doc, "mode": mode, "ingested_at": ingested_at,
    })


class _Interner:
    """Dedupes the strings a batch repeats endlessly (labels, predicates, docs, stamps)."""

    def __init__(self, labels: Mapping[str, str]) -> None:
        self.table: dict[str, str] = {}
        self.labels = labels

    def __call__(self, s: str | None) -> str | None:
        if s is None:
            return None
        got = self.table.get(s)
        if got is None:
            if len(self.table) > 200_000:
                self.table.clear()
            got = self.table[s] = s
        return got

    def label(self, text: str, nid: str) -> str:
        """The stored label object when ``text`` is the node's label (the common case)."""
        lab = self.labels.get(nid)
        return lab if lab is not None and lab == text else self(text)


def _compact(u: Unit, facts: Any, strs: _Interner) -> tuple[tuple, tuple]:
    """(unit record, facts record): what the journal and the in-memory state hold per unit."""
    d = u.__dict__
    table, labels = strs.table, strs.labels
    intern = strs.__call__
    args = []
    for (_pos, nid), a in zip(facts.args, d["args"]):
        text = a.__dict__["node"]
        if text is None:
            args.append(_enc(a))
            continue
        lab = labels.get(nid)
        args.append(lab if lab is not None and lab == text else (table.get(text) or intern(text)))
    mods = tuple([(intern(m.slot), intern(m.value.node) if m.value.node is not None else _enc(m.value))
                  for m in d["mods"]]) if d["mods"] else ()
    subject = d["subject"]
    lab = labels.get(facts.subject)
    if lab is None or lab != subject:
        lab = table.get(subject) or intern(subject)
    rec = (d["id"], lab, table.get(d["predicate"]) or intern(d["predicate"]), intern(d["family"]),
           intern(d["kind"]), d["inverse"], tuple(args), mods, tuple(d["supersedes"]), intern(d["doc"]),
           intern(d["mode"]), intern(d["ingested_at"]))
    nodes = []
    for nid, (text, k) in facts.nodes.items():
        lab = labels.get(nid)
        nodes.append((nid, lab if lab is not None and lab == text else (table.get(text) or intern(text)),
                      _KIND[k.value]))
    if facts.node_supersessions or facts.narrowings or len(facts.relations) > 1:
        edges: dict[tuple[str, str, str], None] = {}  # (src, dst, kind) once per unit, like a keyed multigraph edge
        for src, dst, kind, _family in facts.relations:
            edges[(src, dst, kind)] = None
        for old, newer in facts.node_supersessions:
            edges[(old, newer, "superseded")] = None
        for base, derived in facts.narrowings:
            edges[(base, derived, "narrowed_by")] = None
        edge_t = tuple(edges)
    elif facts.relations:
        src, dst, kind, _family = facts.relations[0]
        edge_t = ((src, dst, kind),)
    else:
        edge_t = ()
    return rec, (facts.subject, tuple(nodes), tuple(facts.context), edge_t)


# -- in-memory state -------------------------------------------------------------------

class _Graph:
    def __init__(self) -> None:
        self.epoch = _NO_EPOCH
        self.generation = 0
        self.units: dict[str, tuple] = {}
        self.labels: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        self.subject: dict[str, list[str]] = {}
        self.context: dict[str, list[str]] = {}
        self.out: dict[str, dict[str, list[tuple[str, str, str]]]] = {k: {} for k in EDGE_KINDS}
        self.inn: dict[str, dict[str, list[tuple[str, str, str]]]] = {k: {} for k in EDGE_KINDS}
        self.superseded_by: dict[str, list[str]] = {}
        self.relations = 0
        self.kind_counts: dict[str, int] = {}

    # persistence as plain containers (no classes in the pickle)
    def dump(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("epoch", "generation", "units", "labels", "kinds", "subject", "context",
                                              "out", "inn", "superseded_by", "relations", "kind_counts")}

    @classmethod
    def restore(cls, data: dict[str, Any]) -> "_Graph":
        g = cls.__new__(cls)
        g.__dict__.update(data)
        return g

    def apply(self, records: Iterable[tuple[tuple, tuple]], report: IngestReport | None = None,
              touched: set[str] | None = None, progress: Callable[[int], None] | None = None) -> None:
        units, labels, kinds = self.units, self.labels, self.kinds
        subject, context, sup = self.subject, self.context, self.superseded_by
        out, inn, kc = self.out, self.inn, self.kind_counts
        dirty_s: set[str] = set()
        dirty_c: set[str] = set()
        n = 0
        for rec, (subj, nodes, ctx, edges) in records:
            uid = rec[0]
            units[uid] = rec
            kc[rec[4]] = kc.get(rec[4], 0) + 1
            for nid, label, kind in nodes:
                if touched is not None:
                    touched.add(nid)
                cur = kinds.get(nid)
                if cur is None:
                    labels[nid] = label
                    kinds[nid] = kind
                    if report is not None:
                        report.nodes_added += 1
                        if kind != "literal":
                            report.new_embeddable_nodes.append(nid)
                elif kind == "derived" and cur == "entry":
                    kinds[nid] = "derived"
            lst = subject.get(subj)
            if lst is None:
                subject[subj] = [uid]
            else:
                lst.append(uid)
                dirty_s.add(subj)
            for nid in ctx:
                lst = context.get(nid)
                if lst is None:
                    context[nid] = [uid]
                else:
                    lst.append(uid)
                    dirty_c.add(nid)
            for src, dst, kind in edges:
                e = (src, dst, uid)
                o = out[kind]
                lst = o.get(src)
                if lst is None:
                    o[src] = [e]
                else:
                    lst.append(e)
                i = inn[kind]
                lst = i.get(dst)
                if lst is None:
                    i[dst] = [e]
                else:
                    lst.append(e)
                if kind in _RELATION_SET:
                    self.relations += 1
            for old in rec[8]:
                lst = sup.get(old)
                if lst is None:
                    sup[old] = [uid]
                elif uid not in lst:
                    lst.append(uid)
            n += 1
            if progress is not None and n % 1000 == 0:
                progress(1000)
        if progress is not None:
            progress(n % 1000)
        # reverse indexes stay sorted, so reads return them without sorting (timsort: appended runs merge in O(n))
        for nid in dirty_s:
            subject[nid].sort()
        for nid in dirty_c:
            context[nid].sort()
        self.generation += 1


class _State:
    """Format 1 snapshots pickled this class (with a networkx graph); kept to read them."""


# -- journal framing --------------------------------------------------------------------

def _read_journal(path: Path, start: int | None = None) -> tuple[str | None, list[bytes], int, int]:
    """(epoch, payloads from ``start``, end of the last whole record, file size).
    epoch None = no journal. A torn last record is left out; damage before good records raises."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return None, [], 0, 0
    with fh:
        data = fh.read()
    if len(data) < _HEADER or not data.startswith(_JOURNAL_MAGIC):
        if len(data) < _HEADER and _JOURNAL_MAGIC.startswith(data[: len(_JOURNAL_MAGIC)]):
            return None, [], 0, len(data)  # header itself torn: a journal that never held a batch
        raise StoreError(f"{path} is not a kgservice journal")
    epoch = data[len(_JOURNAL_MAGIC):_HEADER - 1].decode("ascii", "replace")
    pos = _HEADER if start is None or start < _HEADER else start
    payloads: list[bytes] = []
    while pos < len(data):
        if pos + _FRAME.size > len(data):
            break  # torn frame header at the tail
        tag, length, crc = _FRAME.unpack_from(data, pos)
        end = pos + _FRAME.size + length
        if tag != _FRAME_TAG or end > len(data) or zlib.crc32(data[pos + _FRAME.size:end]) != crc:
            if (tag == _FRAME_TAG and end >= len(data)) or not data[pos:].strip(b"\0"):
                break  # the last append did not complete: that batch was never acknowledged
            raise StoreError(f"{path} is damaged at byte {pos} (a record that is not the last one fails its "
                             "checksum); restore the data directory from a backup")
        payloads.append(data[pos + _FRAME.size:end])
        pos = end
    return epoch, payloads, pos, len(data)


class EmbeddedStore(GraphStore):
    backend = "embedded"

    def __init__(self, data_dir: Path | str):
        self.dir = Path(data_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / SNAPSHOT
        self.journal = self.dir / JOURNAL
        self._snap_sig: tuple | None = None
        self._journal_end = 0  # bytes of the journal reflected in memory (0: none / no journal)
        self._journal_size = 0
        self._snap_bytes = 0
        self.s = self._load()

    # -- persistence ----------------------------------------------------------
    def _sig(self) -> tuple | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _load(self) -> _Graph:
        with paused_gc():
            sig = self._sig()
            if sig is None:
                g = _Graph()
            else:
                try:
                    with self.path.open("rb") as fh:
                        version, state = pickle.load(fh)
                except Exception as exc:  # a torn or foreign file must not be silently replaced
                    raise StoreError(f"cannot read embedded store snapshot {self.path}: {exc}") from exc
                if version == 1:
                    g = self._migrate_v1(state)
                elif version != FORMAT_VERSION:
                    raise StoreError(f"{self.path} has store format {version}, this kgservice reads {FORMAT_VERSION}")
                else:
                    g = _Graph.restore(state)
            self._snap_sig = sig
            self._snap_bytes = sig[2] if sig else 0
            self._journal_end = 0
            self._journal_size = 0
            self._replay(g)
            return g

    @staticmethod
    def _migrate_v1(state: Any) -> _Graph:
        g = _Graph()
        strs = _Interner(g.labels)
        g.apply([_compact(u, unit_facts(u), strs) for u in getattr(state, "units", {}).values()])
        g.epoch = uuid.uuid4().hex  # a v1 directory has no journal that could continue it
        return g

    def _replay(self, g: _Graph) -> None:
        """Apply journal records beyond what ``g`` holds (all of them after a snapshot load)."""
        epoch, payloads, end, size = _read_journal(self.journal, self._journal_end or None)
        if epoch is None or epoch != g.epoch:
            self._journal_end, self._journal_size = 0, size
            return
        for p in payloads:
            try:
                batch = pickle.loads(p)
            except Exception as exc:
                raise StoreError(f"cannot read a batch in {self.journal}: {exc}") from exc
            g.apply(batch)
        self._journal_end, self._journal_size = end, size

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        with (self.dir / ".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if self._sig() != self._snap_sig:
                    self.s = self._load()  # compacted (or replaced) by another process
                else:
                    with paused_gc():
                        self._replay(self.s)  # batches other processes appended since
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _new_journal(self, epoch: str) -> None:
        tmp = self.journal.with_suffix(".jtmp")
        try:
            with tmp.open("wb") as fh:
                fh.write(_JOURNAL_MAGIC + epoch.encode("ascii") + b"\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.journal)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._journal_end = self._journal_size = _HEADER

    def _append(self, records: list[tuple[tuple, tuple]]) -> None:
        """Make a batch durable: one framed record, fsynced. On failure the journal is as before."""
        buf = io.BytesIO()
        pickle.dump(records, buf, protocol=pickle.HIGHEST_PROTOCOL)
        payload = buf.getbuffer()
        if self._journal_end < _HEADER:  # no journal for this epoch yet (or a stale one)
            self._new_journal(self.s.epoch)
        with self.journal.open("r+b") as fh:
            fh.truncate(self._journal_end)  # cut a torn tail left by a crashed writer
            fh.seek(self._journal_end)
            try:
                fh.write(_FRAME.pack(_FRAME_TAG, len(payload), zlib.crc32(payload)))
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            except BaseException:
                fh.truncate(self._journal_end)
                raise
            self._journal_end = self._journal_size = fh.tell()

    def _compact_if_due(self) -> None:
        if self._journal_end - _HEADER < max(COMPACT_MIN_BYTES, self._snap_bytes // 2):
            return
        try:
            self._write_snapshot()
        except OSError as exc:  # the batch is already durable in the journal; compaction can wait
            print(f"kgservice: embedded store compaction postponed: {exc}", file=sys.stderr)

    def _write_snapshot(self) -> None:
        epoch = uuid.uuid4().hex
        old_epoch = self.s.epoch
        tmp = self.path.with_suffix(".tmp")
        self.s.epoch = epoch
        try:
            with paused_gc(), tmp.open("wb") as fh:
                pickle.dump((FORMAT_VERSION, self.s.dump()), fh, protocol=pickle.HIGHEST_PROTOCOL)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            self.s.epoch = old_epoch
            tmp.unlink(missing_ok=True)
            raise
        self._snap_sig = self._sig()
        self._snap_bytes = self._snap_sig[2] if self._snap_sig else 0
        # the old journal is now stale (epoch mismatch); replace it with an empty one
        self._journal_end = 0
        try:
            self._new_journal(epoch)
        except OSError:
            self._journal_end = 0  # the next write creates it

    def compact(self) -> None:
        """Fold the journal into a fresh snapshot now (normally done automatically)."""
        with self._write_lock():
            self._write_snapshot()

    # -- writes ---------------------------------------------------------------
    def ingest(self, units: Sequence[Unit], progress: Callable[[int], None] | None = None) -> IngestReport:
        with self._write_lock(), paused_gc():
            s = self.s
            dups: dict[str, str] = {}
            new, unchanged = prepare_batch(units, lambda ids: {i: _unit_from(s.units[i]) for i in ids if i in s.units},
                                           lambda subjects: [_unit_from(s.units[u]) for n in subjects
                                                             for u in s.subject.get(n, ()) if not s.superseded_by.get(u)],
                                           dups)
            report = IngestReport(units_unchanged=unchanged, duplicates=dups)
            if not new:
                return report
            strs = _Interner(s.labels)
            records = [_compact(u, unit_facts(u), strs) for u in new]
            # cache coherence (issue 15): log the touched nodes before the batch is durable (see caches/changelog.py)
            record_embedded_change(self.dir, {nid for _, facts in records for nid, _, _ in facts[1]})
            self._append(records)  # durable first; memory only changes once the batch is on disk
            touched: set[str] = set()
            try:
                s.apply(records, report, touched, progress)
            except BaseException:
                self.s = self._load()  # memory may be half-applied; disk has the whole batch
                raise
            self._compact_if_due()
            report.units_added = len(new)
            report.touched_nodes = sorted(touched)
            return report

    # -- administration (kg doctor / restore; kgservice.admin) -------------------
    def index_rows(self) -> IndexRows:
        s = self.s
        return IndexRows(
            nodes=list(s.kinds.items()),
            subject=[(u, n) for n, us in s.subject.items() for u in us],
            context=[(u, n) for n, us in s.context.items() for u in us],
            relations=[(src, dst, kind, uid, self._live(uid))
                       for kind, by_src in s.out.items() for edges in by_src.values() for src, dst, uid in edges],
            superseded_by=[(old, new) for old, news in s.superseded_by.items() for new in news],
        )

    def _replace_state(self, g: _Graph) -> None:
        """Make ``g`` the store: written as a fresh snapshot (new epoch, empty journal)."""
        old = self.s
        g.epoch = old.epoch
        self.s = g
        try:
            self._write_snapshot()
        except BaseException:
            self.s = old
            raise

    def rebuild_indexes(self, unit_ids: Sequence[str] | None = None) -> dict[str, int]:
        """Always rebuilds everything from the stored units (in memory it is cheap); labels kept."""
        with self._write_lock(), paused_gc():
            old = self.s
            g = _Graph()
            strs = _Interner(g.labels)
            g.apply([_compact(u, unit_facts(u), strs) for u in map(_unit_from, old.units.values())])
            for nid in g.labels:
                if nid in old.labels:
                    g.labels[nid] = old.labels[nid]
            g.generation = old.generation + 1
            self._replace_state(g)
            removed = sum(1 for n in old.kinds if n not in g.kinds)
            return {"units_rederived": len(g.units), "ids_cleared": 0, "nodes_removed": removed}

    def relabel_nodes(self, labels: Mapping[str, str]) -> int:
        with self._write_lock():
            s = self.s
            changed = {n: lab for n, lab in labels.items() if n in s.labels and s.labels[n] != lab}
            if changed:
                before = {n: s.labels[n] for n in changed}
                s.labels.update(changed)
                s.generation += 1
                try:
                    self._write_snapshot()
                except BaseException:
                    s.labels.update(before)
                    raise
            return len(changed)

    def wipe(self) -> None:
        with self._write_lock():
            g = _Graph()
            g.generation = self.s.generation + 1
            self._replace_state(g)

    # -- units and nodes ------------------------------------------------------
    def get_units(self, ids: Iterable[str]) -> list[Unit]:
        units = self.s.units
        return [_unit_from(units[i]) for i in ids if i in units]

    def iter_units(self) -> Iterator[Unit]:
        for rec in list(self.s.units.values()):
            yield _unit_from(rec)

    def _node(self, nid: str) -> Node:
        return _model(Node, {"id": nid, "label": self.s.labels[nid], "kind": _NODE_KIND[self.s.kinds[nid]]})

    def get_nodes(self, ids: Iterable[str]) -> list[Node]:
        kinds = self.s.kinds
        return [self._node(i) for i in ids if i in kinds]

    def iter_nodes(self) -> Iterator[Node]:
        for nid in list(self.s.kinds):
            yield self._node(nid)

    def counts(self) -> dict[str, int]:
        s = self.s
        out = {
            "units": len(s.units),
            "nodes": len(s.kinds),
            "relations": s.relations,
            "superseded_units": sum(1 for v in s.superseded_by.values() if v),
        }
        for k, n in s.kind_counts.items():
            out[f"kind:{k}"] = n
        return out

    # -- procedures -------------------------------------------------------------
    def _live(self, unit_id: str) -> bool:
        return not self.s.superseded_by.get(unit_id)

    def subject_mentions(self, node_id: str) -> list[str]:
        return list(self.s.subject.get(node_id, ()))

    def context_mentions(self, node_id: str) -> list[str]:
        return list(self.s.context.get(node_id, ()))

    def _neighbours(self, node_id: str, kind: str, out: bool) -> set[str]:
        sup = self.s.superseded_by
        if out:
            return {e[1] for e in self.s.out[kind].get(node_id, ()) if not sup.get(e[2])}
        return {e[0] for e in self.s.inn[kind].get(node_id, ()) if not sup.get(e[2])}

    def _edges(self, node_id: str, kind: str, out: bool) -> list[str]:
        return sorted(self._neighbours(node_id, kind, out))

    def narrowed_by(self, node_id: str) -> list[str]:
        return self._edges(node_id, "narrowed_by", out=True)

    def narrows(self, node_id: str) -> list[str]:
        return self._edges(node_id, "narrowed_by", out=False)

    def synonym_class(self, node_id: str) -> list[str]:
        seen = {node_id}
        frontier = [node_id]
        for _ in range(MAX_CLOSURE_DEPTH):
            nxt = []
            for n in frontier:
                for m in self._neighbours(n, "synonym", True) | self._neighbours(n, "synonym", False):
                    if m not in seen:
                        seen.add(m)
                        nxt.append(m)
            frontier = nxt
            if not frontier:
                break
        return sorted(seen)

    def belongs_to_parents(self, node_ids: Sequence[str]) -> list[str]:
        found: set[str] = set()
        for n in node_ids:
            found |= self._neighbours(n, "belongs_to", True)
        return sorted(found)

    def belongs_to_ancestors(self, node_id: str) -> dict[str, int]:
        depth: dict[str, int] = {}
        frontier = [node_id]
        for d in range(1, MAX_CLOSURE_DEPTH + 1):
            nxt = []
            for p in self.belongs_to_parents(frontier):
                if p not in depth and p != node_id:
                    depth[p] = d
                    nxt.append(p)
            if not nxt:
                break
            frontier = nxt
        return depth

    def sunk_units(self, node_id: str) -> list[tuple[str, str]]:
        out = []
        for anc in self.belongs_to_ancestors(node_id):
            out.extend((u, anc) for u in self.subject_mentions(anc))
        return sorted(out)

    def superseded_end(self, unit_ids: Sequence[str]) -> dict[str, list[str]]:
        sup = self.s.superseded_by
        result: dict[str, list[str]] = {}
        for uid in unit_ids:
            if not sup.get(uid):
                result[uid] = [uid]
                continue
            ends: set[str] = set()
            seen = {uid}
            todo = [uid]
            while todo:
                u = todo.pop()
                nxt = sup.get(u) or ()
                if not nxt:
                    ends.add(u)
                for v in nxt:
                    if v not in seen:
                        seen.add(v)
                        todo.append(v)
            result[uid] = sorted(ends)
        return result

    def node_superseded_end(self, node_id: str) -> list[str]:
        # As cypher/node_superseded_end: terminal nodes within MAX_CLOSURE_DEPTH hops, else the
        # node itself (nothing replaces it, or the replacements form a cycle).
        if not self.s.out["superseded"].get(node_id):
            return [node_id]
        ends: set[str] = set()
        seen = {node_id}
        frontier = [node_id]
        for _ in range(MAX_CLOSURE_DEPTH):
            nxt_frontier = []
            for n in frontier:
                for m in self._edges(n, "superseded", True):
                    if not self._edges(m, "superseded", True):
                        ends.add(m)
                    if m not in seen:
                        seen.add(m)
                        nxt_frontier.append(m)
            frontier = nxt_frontier
            if not frontier:
                break
        return sorted(ends) or [node_id]

    def spread_step(self, frontier: Mapping[str, float], tau: Mapping[str, float],
                    max_fanout: int | None = None, degree_damping: float = 0.0) -> dict[str, float]:
        s = self.s
        if max_fanout is not None:
            frontier = {n: e for n, e in frontier.items() if self._spread_degree(n) <= max_fanout}
        sup = s.superseded_by
        kinds = s.kinds
        # Kinds in alphabetical order, so each neighbour receives its contributions from a
        # frontier node in (neighbour, kind) order exactly as a sorted walk would add them
        # (float sums come out bit-identical) without sorting every node's edges.
        plan = []
        for kind in sorted(_SPREAD_OUT):
            t = tau.get(kind, 0.0)
            if t > 0:
                plan.append((t, s.out[kind], s.inn[kind] if kind in BIDIRECTIONAL else None))
        incoming: dict[str, float] = {}
        get = incoming.get
        for n in sorted(frontier):
            if n not in kinds:
                continue
            e = frontier[n]
            rows = []  # (tau, neighbours) per kind: the node's (neighbour, kind) rows this hop
            for t, out_adj, in_adj in plan:
                lst = out_adj.get(n)
                nbrs = {dst for _, dst, u in lst if not sup.get(u)} if lst else set()
                if in_adj is not None:
                    lst = in_adj.get(n)
                    if lst:
                        nbrs.update(src for src, _, u in lst if not sup.get(u))
                rows.append((t, [m for m in nbrs if not is_literal_id(m)]))
            if degree_damping:
                e = e / max(1, sum(len(ms) for _, ms in rows)) ** degree_damping
            for t, ms in rows:
                for m in ms:
                    incoming[m] = get(m, 0.0) + e * t
        return incoming

    def causal_step(self, node_ids: Sequence[str], family: str) -> list[tuple[str, str, str]]:
        s = self.s
        out = {(src, dst, u) for n in node_ids for src, dst, u in s.out["content"].get(n, ())
               if not s.superseded_by.get(u) and s.units[u][3] == family and not is_literal_id(dst)}
        return sorted(out)

    def _spread_degree(self, node_id: str) -> int:
        s = self.s
        return sum(len(s.out[k].get(node_id, ())) + len(s.inn[k].get(node_id, ())) for k in _SPREAD_OUT)
