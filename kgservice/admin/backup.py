"""``kg dump`` / ``kg restore``: the units - the ground truth - to and from one portable file.

The file is JSON Lines, UTF-8 (gzip-compressed when the name ends in ``.gz``)::

    {"kgservice_dump": 1, "created_at": ..., "backend": ..., "units": N, "nodes": M}
    {"unit": {...the unit's JSON form (DESIGN §1), ingested_at and doc included...}}   x N
    {"node": {"id": ..., "label": ..., "kind": ...}}                                    x M
    {"alias": {"id": ..., "unit": ...}}                                                 x A
    {"document": ...} / {"retracted": ...} / {"change": ...}  (the lifecycle)           x L
    {"saved_result": {...a SavedResult: name, date, question, answer, ...}}            x S
    {"merge_decision": {"a": ..., "b": ..., "same": ..., "reason": ..., ...}}          x R
    {"end": {"units": N, "nodes": M, "aliases": A, "lifecycle": L, "saved_results": S,
             "merge_decisions": R, "sha256": "<of every line above this one>"}}

Units come in dependency order (a unit after the units it supersedes or refers to), so any
prefix of them is a valid batch. Node records only carry display labels: nodes are
re-derived from units on restore, and their labels set back to the dumped ones (the first
surface form ingested), so a restored store answers every query exactly as the dumped one.
Alias records are the duplicates ingest merged away (id -> the dumped unit it was merged
into), so later batches can still supersede them by their own id after a restore; dumps
written before aliases were kept have no ``aliases`` counts and no alias records.
Saved results (the team's feedback on answers, :mod:`kgservice.stores.shared`) are part of the
knowledge base too: a restore adds each dumped one the target does not hold by name, and keeps
the target's own (a replacing restore wipes the knowledge, not the feedback). A dump written
before they were dumped has no ``saved_results`` count and restores as it always did.
Entity-resolution decisions (:mod:`kgservice.extraction.decisions`: what the model said about a
pair of labels) restore the same way: each dumped pair the target has not decided is added,
the target's own decision for a pair stays; a dump without them restores as before.

A dump is written to a temporary file and renamed, so a crash never leaves a half file
under the final name. ``restore`` reads and verifies the whole file first (header, every
line, counts, checksum, and the batch validation against the target store) and only then
writes; a truncated, edited or foreign file is refused with the line it failed at.
"""

from __future__ import annotations

from kgservice.disk import replaced, writing
from kgservice.errors import InputError, ReadOnlyError, StoreError
import gzip
import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pydantic import ValidationError

from kgservice.admin.recover import dependency_order
from kgservice.model import Node, NodeKind, Unit
from kgservice.pipeline.ingest import ingest_units
from kgservice.stores.factory import capabilities
from kgservice.stores.shared import MergeDecision, SavedResult
from kgservice.notation.serializer import format_unit
from kgservice.stores.base import GraphStore
from kgservice.stores.validate import prepare_batch

if TYPE_CHECKING:
    from kgservice.parts import Parts
    from kgservice.stores.embedded.files import EmbeddedFiles

FORMAT = 1
CHUNK = 5000  # units per ingest batch on restore


class DumpError(InputError, ValueError):
    """The file is not a complete, intact kgservice dump; nothing was restored."""


class TargetNotEmpty(InputError, ValueError):
    """A restore without --merge or --replace into a store that holds units: the store is fine,
    the command line must say what to do with them (exit 2); nothing was restored."""


@dataclass
class Dump:
    header: dict[str, Any]
    units: list[Unit]
    nodes: list[Node] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # merged-away duplicate id -> unit id
    lifecycle: list[tuple[str, Any]] = field(default_factory=list)  # ("document"|"retracted"|"change", record)
    saved_results: list[SavedResult] = field(default_factory=list)
    merge_decisions: list[MergeDecision] = field(default_factory=list)
    size: int = 0  # bytes of JSON lines (uncompressed): what a restore needs room for


def _open_write(path: Path, gz: bool) -> IO[bytes]:
    """``gz`` comes from the *final* name: the temp file written first never ends in ``.gz``."""
    raw = open(path, "wb")
    if not gz:
        return raw
    # filename "": no temp name in the header. The ignore: a GzipFile is a binary file object
    # (io.BufferedIOBase), but typeshed does not declare it an IO[bytes], the type replaced() takes
    return _GzipOwning(raw)  # type: ignore[return-value]


class _GzipOwning(gzip.GzipFile):
    """A GzipFile that also closes the file it writes to (GzipFile leaves a given fileobj open)."""

    _raw: IO[bytes] | None = None  # also when __init__ failed (close() still runs at collection)

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__(filename="", fileobj=raw, mode="wb", mtime=0)
        self._raw = raw

    def close(self) -> None:
        raw, self._raw = self._raw, None
        try:
            super().close()
        finally:
            if raw is not None:
                raw.close()


def _life_models() -> dict[str, Any]:
    from kgservice.lifecycle.model import ChangeRecord, DocumentRecord, RetractedUnit

    return {"document": DocumentRecord, "retracted": RetractedUnit, "change": ChangeRecord}


class _LifeModels(dict):
    def __missing__(self, key: str) -> Any:
        self.update(_life_models())
        return dict.__getitem__(self, key)


_LIFE: dict[str, Any] = _LifeModels()


def dump(store: GraphStore, path: Path | str) -> dict[str, Any]:
    """Write every unit (and node label) of the store to ``path``; returns counts."""
    with writing(path, "the dump"):
        return _dump(store, Path(path))


def _dump(store: GraphStore, path: Path) -> dict[str, Any]:
    units = dependency_order(store.iter_units())
    nodes = sorted(store.iter_nodes(), key=lambda n: n.id)
    ids = {u.id for u in units}
    aliases = sorted((d, k) for d, k in store.aliases(None).items() if k in ids and d not in ids)
    header = {"kgservice_dump": FORMAT, "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "backend": store.backend, "units": len(units), "nodes": len(nodes), "aliases": len(aliases)}
    digest = hashlib.sha256()
    path.parent.mkdir(parents=True, exist_ok=True)
    with replaced(path, open_tmp=lambda tmp: _open_write(tmp, gz=path.name.endswith(".gz"))) as fh:
        def put(obj: dict[str, Any]) -> None:
            line = (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
            digest.update(line)
            fh.write(line)

        put(header)
        for u in units:
            put({"unit": u.model_dump(mode="json")})
        for n in nodes:
            put({"node": {"id": n.id, "label": n.label, "kind": n.kind.value}})
        for d, k in aliases:
            put({"alias": {"id": d, "unit": k}})
        life = 0  # the lifecycle: documents, retracted units, the history of changes
        for doc in store.documents():
            put({"document": doc.model_dump(mode="json")})
            life += 1
        for r in store.retracted_units().values():
            put({"retracted": r.model_dump(mode="json")})
            life += 1
        for c in store.changes():
            put({"change": c.model_dump(mode="json")})
            life += 1
        saved = store.saved_results()
        for r in saved:
            put({"saved_result": r.model_dump(mode="json")})
        decisions = store.merge_decisions()
        for m in decisions:
            put({"merge_decision": m.model_dump(mode="json")})
        fh.write((json.dumps({"end": {"units": len(units), "nodes": len(nodes), "aliases": len(aliases),
                                      "lifecycle": life, "saved_results": len(saved),
                                      "merge_decisions": len(decisions), "sha256": digest.hexdigest()}})
                  + "\n").encode("utf-8"))
    return {"path": str(path), "units": len(units), "nodes": len(nodes), "aliases": len(aliases),
            "saved_results": len(saved), "merge_decisions": len(decisions), "sha256": digest.hexdigest()}


def read_dump(path: Path | str) -> Dump:
    """Read and verify a dump completely; :class:`DumpError` names the first problem."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DumpError(f"no such dump file: {path}") from None
    except OSError as exc:
        raise DumpError(f"cannot read the dump file {path}: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise DumpError(f"{path}: damaged gzip data ({exc}); nothing restored") from None
    if not data.strip():
        raise DumpError(f"{path}: empty file, not a kgservice dump")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    digest = hashlib.sha256()
    header: dict[str, Any] | None = None
    units: list[Unit] = []
    nodes: list[Node] = []
    aliases: dict[str, str] = {}
    life: list[tuple[str, Any]] = []
    saved: dict[str, SavedResult] = {}
    decided: dict[tuple[str, str], MergeDecision] = {}
    end: dict[str, Any] | None = None
    for lineno, raw in enumerate(lines, start=1):
        where = f"{path}:{lineno}"
        if end is not None:
            raise DumpError(f"{where}: data after the end record")
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise DumpError(f"{where}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})") from None
        except json.JSONDecodeError as exc:
            raise DumpError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict) or len(obj) < 1:
            raise DumpError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        if lineno == 1:
            if obj.get("kgservice_dump") != FORMAT:
                raise DumpError(f"{where}: not a kgservice dump (format {FORMAT}) header: {raw[:120]!r}")
            header = obj
        elif "end" in obj:
            end = obj["end"] if isinstance(obj["end"], dict) else {}
            continue
        elif set(obj) == {"unit"}:
            if nodes or aliases:
                raise DumpError(f"{where}: unit record after {'node' if nodes else 'alias'} records")
            if isinstance(obj["unit"], dict) and not isinstance(obj["unit"].get("inverse", False), bool):
                raise DumpError(f"{where}: not a valid unit (inverse: must be true or false, "
                                f"got {obj['unit']['inverse']!r})")
            try:
                units.append(Unit.model_validate(obj["unit"]))
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first.get("loc", ()))
                raise DumpError(f"{where}: not a valid unit ({loc}: {first.get('msg')})") from None
        elif set(obj) == {"alias"}:
            a = obj["alias"]
            if (not isinstance(a, dict) or set(a) != {"id", "unit"} or not all(isinstance(v, str) for v in a.values())
                    or a["id"] in aliases):
                raise DumpError(f"{where}: not a valid alias record (expected a new {{\"id\": ..., \"unit\": ...}})")
            aliases[a["id"]] = a["unit"]
        elif len(obj) == 1 and next(iter(obj)) in ("document", "retracted", "change"):
            key = next(iter(obj))
            try:
                life.append((key, _LIFE[key].model_validate(obj[key])))
            except ValidationError as exc:
                raise DumpError(f"{where}: not a valid {key} record ({exc.errors()[0].get('msg')})") from None
        elif set(obj) == {"saved_result"}:
            rec = _validated(SavedResult, obj, "saved_result", where)
            problem = _saved_name_problem(rec.name, saved)
            if problem:
                raise DumpError(f"{where}: not a valid saved_result record (name {rec.name[:80]!r}: {problem})")
            saved[rec.name] = rec
        elif set(obj) == {"merge_decision"}:
            dec = _validated(MergeDecision, obj, "merge_decision", where)
            if dec.a > dec.b or (dec.a, dec.b) in decided:
                raise DumpError(f"{where}: not a valid merge_decision record (pair {dec.a[:40]!r} / {dec.b[:40]!r}: "
                                + ("a second record for it)" if dec.a <= dec.b else "its keys out of order)"))
            decided[(dec.a, dec.b)] = dec
        elif set(obj) == {"node"}:
            if aliases:
                raise DumpError(f"{where}: node record after alias records")
            try:
                nodes.append(Node.model_validate(obj["node"]))
            except ValidationError as exc:
                raise DumpError(f"{where}: not a valid node record ({exc.errors()[0].get('msg')})") from None
        else:
            raise DumpError(f"{where}: unknown record with keys {sorted(obj)[:5]}")
        digest.update(raw + b"\n")
    assert header is not None
    if end is None:
        raise DumpError(f"{path}: no end record - the file is truncated (read {len(units)} unit(s)); nothing restored")
    if end.get("units") != len(units) or end.get("nodes") != len(nodes) or end.get("units") != header.get("units"):
        raise DumpError(f"{path}: counts do not match (header {header.get('units')} units, end record "
                        f"{end.get('units')} units / {end.get('nodes')} nodes, file {len(units)} / {len(nodes)})")
    if end.get("aliases", 0) != len(aliases) or header.get("aliases", 0) != len(aliases):
        raise DumpError(f"{path}: alias counts do not match (header {header.get('aliases', 0)}, end record "
                        f"{end.get('aliases', 0)}, file {len(aliases)})")
    if end.get("lifecycle", 0) != len(life):
        raise DumpError(f"{path}: lifecycle record counts do not match (end record {end.get('lifecycle', 0)}, "
                        f"file {len(life)})")
    if end.get("saved_results", 0) != len(saved):
        raise DumpError(f"{path}: saved result counts do not match (end record {end.get('saved_results', 0)}, "
                        f"file {len(saved)})")
    if end.get("merge_decisions", 0) != len(decided):
        raise DumpError(f"{path}: merge decision counts do not match (end record {end.get('merge_decisions', 0)}, "
                        f"file {len(decided)})")
    if end.get("sha256") != digest.hexdigest():
        raise DumpError(f"{path}: checksum mismatch - the file was changed or damaged after it was written")
    ids = {u.id for u in units}
    for dup, kept in aliases.items():
        if kept not in ids or dup in ids:
            raise DumpError(f"{path}: alias #{dup[:80]} -> #{kept[:80]}: " + (
                "the id is also a unit's" if dup in ids else "names no unit of the dump") + "; nothing restored")
    return Dump(header=header, units=units, nodes=nodes, aliases=aliases, size=len(data), lifecycle=life,
                saved_results=list(saved.values()), merge_decisions=list(decided.values()))


def _validated(model: Any, obj: dict[str, Any], kind: str, where: str) -> Any:
    """A dump record's body as its model, or a DumpError naming the line and the first bad field."""
    try:
        return model.model_validate(obj[kind])
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise DumpError(f"{where}: not a valid {kind} record ({loc}: {first.get('msg')})") from None


def _saved_name_problem(name: str, seen: dict[str, SavedResult]) -> str | None:
    """A saved result's name is a memory doc's file name (exports write it into a folder), so a
    dump may only carry plain, distinct file names."""
    if name in seen:
        return "a second record with this name"
    if not name.strip() or name in (".", "..") or any(c in name for c in "/\\\0"):
        return "must be a plain file name"
    return None


def check_units(d: Dump, lexicon: Any, path: Path | str) -> None:
    """A dump is re-derived, so what it says must be what this kgservice would derive itself:
    each unit's family / kind / inverse is what the lexicon gives its predicate (an edited dump
    that relabels ``causes`` as a synonym would merge unrelated concepts), and ``ingested_at``
    is a timestamp. The checksum only proves the file is as written, not that it is sound."""
    from kgservice.stores.validate import unit_text_problems

    from kgservice.ids import normalise_label

    problems: list[str] = []
    for i, u in enumerate(d.units):
        if unit_text_problems(u):
            continue  # unstorable text: the batch validation rejects it with its own message
        info = lexicon.resolve(u.predicate, object_is_literal=bool(u.args) and u.args[0].literal is not None)
        if (u.family, u.kind, u.inverse) != (info.base, info.kind, info.inverse) \
                and (u.kind, u.family, u.inverse) == ("content", normalise_label(u.predicate), False):
            # a dump written before predicates were matched by base form: an unlisted predicate
            # was then a family of its own word for word ("caused"); derive it as today
            u = d.units[i] = u.model_copy(update={"family": info.base, "kind": info.kind, "inverse": info.inverse})
        if (u.family, u.kind, u.inverse) != (info.base, info.kind, info.inverse):
            problems.append(f"unit #{u.id}: predicate {u.predicate!r} is family {info.base!r} / kind {info.kind} / "
                            f"inverse {info.inverse} in this lexicon, but the dump says {u.family!r} / {u.kind} / "
                            f"inverse {u.inverse}")
        if u.ingested_at is not None:
            try:
                datetime.fromisoformat(u.ingested_at)
            except ValueError:
                problems.append(f"unit #{u.id}: ingested_at {u.ingested_at[:40]!r} is not an ISO timestamp")
    if problems:
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise DumpError(f"{path}: {len(problems)} unit(s) disagree with this kgservice; nothing restored (an edited "
                        "dump, or one written with another lexicon: set KG_LEXICON as when it was dumped):\n  "
                        + "\n  ".join(problems[:20]) + more)


def restore(parts: Parts, path: Path | str, *, replace: bool = False, merge: bool = False, embed: bool = True,
            progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Restore a verified dump into the knowledge base's store.

    The target must be empty, unless ``merge`` (add to it: identical units count as
    unchanged, a conflicting one rejects the whole restore before anything is written) or
    ``replace`` (wipe it - graph, vectors, caches - after the dump and the batch were verified)."""
    if parts.settings.read_only:
        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); restore refused")
    _refuse_if_served(parts)
    d = read_dump(path)
    check_units(d, parts.lexicon, path)
    files = capabilities(parts.settings).files if replace else None
    if files is not None:  # a store of files: built beside and swapped in
        return _replace_beside(parts, files, d, path, embed=embed, progress=progress)
    store: GraphStore = parts.store
    before = store.counts().get("units", 0)
    if before and not (merge or replace):
        raise TargetNotEmpty(f"the target store already holds {before} unit(s); restore into an empty store, "
                             "or pass --merge (add to it) or --replace --yes (wipe it first)")

    def existing(ids: Iterable[str]) -> dict[str, Unit]:
        return {} if replace else {u.id: u for u in store.get_units(ids)}

    dumped = _archived_ids(d)

    def archived(ids: list[str]) -> set[str]:
        return {i for i in ids if i in dumped} | (set() if replace else set(store.retracted_units(ids)))

    # every conflict / dangling reference, before anything is written
    prepare_batch(d.units, existing, archived=archived)
    if replace:
        from kgservice.stores.changelog import record_change

        store.mark_restore(restore_record(path, len(d.units)))  # before the wipe: see interrupted_restore
        store.wipe()  # logs "everything" changes: every server's caches clear
        _clear_vectors(parts)
        record_change(store, [], everything=True)  # and again once the old vectors are gone too
        try:
            parts.caches.clear()
        except Exception:  # a missing or broken cache file must not block a restore
            pass
    _restore_lifecycle(store, d, archive_only=True)  # units that supersede archived ones are then valid
    added = unchanged = 0
    for i in range(0, len(d.units), CHUNK):
        try:
            rep = ingest_units(parts, d.units[i:i + CHUNK], embed=embed)
        except Exception as exc:
            if not replace:
                raise
            # Neo4j (one database in Community): the store was wiped first, so say exactly where it stands
            raise StoreError(f"restore --replace stopped after {added} of {len(d.units)} units "
                             f"({type(exc).__name__}: {exc}); the old content was already wiped: `kg doctor "
                             "--repair` resumes it from the same dump (or run the same restore again; identical "
                             "units count as unchanged)") from exc
        added += rep.units_added
        unchanged += rep.units_unchanged
        if progress is not None:
            progress(len(d.units[i:i + CHUNK]))
    labels = {n.id: n.label for n in d.nodes}
    current = {n.id: n.label for n in store.get_nodes(list(labels))}
    relabel = {k: v for k, v in labels.items() if k in current and current[k] != v}
    relabeled = store.relabel_nodes(relabel) if relabel else 0
    aliased = store.add_aliases(d.aliases) if d.aliases else 0
    if embed and relabel:
        parts.node_vectors.embed([n.id for n in store.get_nodes(list(relabel)) if n.kind != NodeKind.LITERAL])
    _restore_lifecycle(store, d)
    present = {x.id for x in store.get_units([u.id for u in d.units])}
    missing = [u.id for u in d.units if u.id not in present]
    if missing:
        raise StoreError(f"restore incomplete: {len(missing)} unit(s) not found afterwards (e.g. #{missing[0]})")
    saved = _restore_saved_results(store, d)
    decisions = restore_merge_decisions(store, d.merge_decisions)
    if replace:
        store.mark_restore(None)
    return {"path": str(path), "units": len(d.units), "units_added": added, "units_unchanged": unchanged,
            "nodes": len(d.nodes), "labels_restored": relabeled, "aliases_restored": aliased,
            "saved_results_restored": saved, "merge_decisions_restored": decisions, "replaced": replace,
            "dumped_at": d.header.get("created_at"), "dumped_from": d.header.get("backend")}


def file_sha256(path: Path | str) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _refuse_if_served(parts: Parts) -> None:
    """A restore replaces or adds to the workspace under a running server's caches and open
    store: refused while one serves it, on either backend (:func:`kgservice.deployment.refuse_if_served`;
    on Neo4j the store is the one the restore writes, so no second connection is opened)."""
    from kgservice.deployment import refuse_if_served

    shared = None if capabilities(parts.settings).one_process else parts.store
    refuse_if_served(parts.settings, f"restoring workspace {parts.settings.workspace!r}", exclusive=True,
                     store=shared)


def restore_record(path: Path | str, units: int) -> dict[str, Any]:
    """What a store records before a replace restore wipes it: enough for ``kg doctor`` to name
    the interrupted restore and for ``--repair`` to resume it from the same, unchanged dump."""
    from datetime import datetime, timezone

    return {"path": str(Path(path).resolve()), "sha256": file_sha256(path), "units": units,
            "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _replace_beside(parts: Parts, files: EmbeddedFiles, d: Dump, path: Path | str, *, embed: bool,
                    progress: Callable[[int], None] | None) -> dict[str, Any]:
    """``--replace`` on the embedded store: the new store is built beside the old one and swapped
    in only when complete (kgservice.admin.recover), so a full disk or a crash never costs the old
    store, and a damaged old store (which cannot even be opened) can be replaced."""
    from kgservice.admin import recover

    dumped = _archived_ids(d)
    # every conflict / dangling reference, before anything is written
    prepare_batch(d.units, lambda ids: {}, archived=lambda ids: {i for i in ids if i in dumped})
    target = files.graph
    need = int(d.size * recover.STORE_BYTES_PER_DUMP_BYTE) + recover.SLACK_BYTES
    recover.check_space(target, need, f"restoring {len(d.units)} units")
    try:
        new, relabeled = files.build_beside(d.units, {n.id: n.label for n in d.nodes}, progress,
                                            aliases=d.aliases, lifecycle=_lifecycle_lists(d))
    except OSError as exc:
        raise StoreError(f"restore failed while building the new store beside the old one ({exc}); the old "
                         "store is unchanged and the partial new one was removed") from None
    parts.forget_opened()
    files.swap_in(new)
    caches = recover.reset_caches(parts)
    saved = _restore_saved_results(parts.store, d)  # shared.sqlite3 is beside the graph: the swap kept it
    decisions = restore_merge_decisions(parts.store, d.merge_decisions)  # kept there too
    info = {"path": str(path), "units": len(d.units), "units_added": len(d.units), "units_unchanged": 0,
            "nodes": len(d.nodes), "labels_restored": relabeled, "aliases_restored": len(d.aliases),
            "saved_results_restored": saved, "merge_decisions_restored": decisions, "replaced": True, "caches": caches,
            "dumped_at": d.header.get("created_at"), "dumped_from": d.header.get("backend")}
    try:
        _clear_vectors(parts)
        if embed:
            info["vectors_embedded"] = parts.node_vectors.embed(
                [n.id for n in parts.store.iter_nodes() if n.kind != NodeKind.LITERAL])
    except Exception as exc:
        raise StoreError(f"the graph was restored ({len(d.units)} units), but its vectors were not: "
                         f"{type(exc).__name__}: {exc}; run `kg doctor --repair` to embed them") from None
    return info


def _archived_ids(d: Dump) -> set[str]:
    return {r.unit.id for k, r in d.lifecycle if k == "retracted"}


def _lifecycle_lists(d: Dump) -> tuple[list[Any], list[Any], list[Any]]:
    """GraphStore.restore_lifecycle's arguments: the dump's documents, retracted units, changes."""
    return tuple([r for k, r in d.lifecycle if k == kind]  # type: ignore[return-value]
                 for kind in ("document", "retracted", "change"))


def _restore_lifecycle(store: GraphStore, d: Dump, *, archive_only: bool = False) -> None:
    """The dump's documents, retracted units and history into the store (after its units).
    ``archive_only``: just the retracted units, before the units (a live unit may supersede
    one); the full call after the units writes them again, which changes nothing."""
    retracted = [r for k, r in d.lifecycle if k == "retracted"]
    if archive_only:
        if retracted:
            store.restore_lifecycle([], retracted, [])
        return
    if not d.lifecycle:
        return
    store.restore_lifecycle([r for k, r in d.lifecycle if k == "document"], retracted,
                            [r for k, r in d.lifecycle if k == "change"])


def _restore_saved_results(store: GraphStore, d: Dump) -> int:
    """Add the dump's saved results the store does not hold by name (a name is unique, so one
    already there is the same result); the store's others stay. Returns how many were added."""
    if not d.saved_results:
        return 0
    have = {r.name for r in store.saved_results()}
    new = [r for r in d.saved_results if r.name not in have]
    for r in new:
        store.save_result(r)
    return len(new)


def restore_merge_decisions(store: GraphStore, decisions: Iterable[MergeDecision]) -> int:
    """Add the dumped entity-resolution decisions for pairs the store has not decided (its own
    decision for a pair stays); returns how many were added."""
    added = 0
    for m in decisions:
        if store.merge_decision(m.a, m.b) is None:
            store.record_merge_decision(m)
            added += 1
    return added


def _clear_vectors(parts: Parts) -> None:
    """Drop every vector of a wiped graph (if a vector store is configured and opens)."""
    from kgservice.vectors import VectorStoreMismatch

    try:
        vs = parts.vectors
    except VectorStoreMismatch:
        vs = parts.reopen_vectors(recreate=True)
    ids = vs.ids()
    if ids:
        vs.delete(sorted(ids))


def canonical_units(units: Iterable[Unit]) -> list[str]:
    """Units as comparable text (notation + provenance), for tests and verification."""
    return sorted(f"{format_unit(u)}\n%{u.doc}|{u.mode}|{u.ingested_at}" for u in units)

