"""``kg doctor``: does the graph still say what its units say, and does every node have its vector?

Units are the ground truth. Everything else - nodes and their kinds, the reverse indexes
(``subject_mentions``, ``context_mentions``; on Neo4j the SUBJECT / ARG / MOD edges), the
node-to-node relation edges with their liveness, the unit supersession links - is derived
from them by :func:`kgservice.stores.facts.unit_facts`. The doctor recomputes all of it from
the units (:func:`expected_rows`), reads back what the store holds
(:meth:`GraphStore.index_rows`) and reports every difference, plus:

* nodes without vectors (entry / derived nodes missing from the vector store),
* vectors without nodes (points whose node is gone or is a literal),
* a vector collection embedded with another model,
* duplicate aliases (the ids of duplicates merged away at ingest, ``GraphStore.aliases``) that
  name no unit, live or archived (``damaged``: the unit they were merged into is gone; references
  to the alias would be pointed at nothing), or whose id is also a stored unit's (``drifted``: the
  stored unit always wins, so the alias is never read; ``--repair`` deletes it). An alias of a
  retracted unit is archived with it (forget, undo, retract), not dangling.

Every finding has a *category* with the command that fixes it:

* ``drifted`` - derived data (indexes, relation edges, vectors) disagrees with intact units:
  ``kg doctor --repair`` re-derives it;
* ``damaged`` - stored files fail their checksums, or units are invalid / dangling / duplicated:
  ``kg doctor --salvage`` keeps every intact record, ``kg restore DUMP --replace --yes`` rebuilds
  from a dump; ``--repair`` never re-derives from damaged data;
* ``missing`` - a file the others depend on is gone (the embedded snapshot next to a journal
  that continues it): put it back, salvage, or restore.

``repair`` re-derives the affected units in one atomic write (:meth:`GraphStore.rebuild_indexes`),
clears the query caches, deletes stray vectors, embeds missing ones (re-creating the
collection on a model change), rebuilds Neo4j's vector index in one population (the
``neo4j`` vector backend: small ingests leave it in many segments) and checks again. What it cannot fix - unreadable or invalid
units, references to units that do not exist, duplicate unit ids - is reported and left
for a person (restore from ``kg dump`` if needed).

Order matters under concurrent ingest: vector ids are read *before* the graph, and ingest
writes the graph before the vectors, so a vector can never look orphaned only because its
node's ingest was still in flight.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kgservice.model import NodeKind, Unit
from kgservice.stores.base import GraphStore, IndexRows
from kgservice.errors import ReadOnlyError, StoreDamaged
from kgservice.stores.facts import unit_facts
from kgservice.stores.validate import unit_text_problems

if TYPE_CHECKING:
    from kgservice.parts import Parts

SHOW = 20  # examples listed per finding

# checks a re-derivation of units fixes
GRAPH_CHECKS = ("nodes", "subject_index", "context_index", "arg_edges", "mod_edges", "relations", "supersessions")
VECTOR_CHECKS = ("nodes_without_vectors", "vectors_without_nodes", "vector_collection")
ALIAS_SHADOWED = "id is also a stored unit's (never read)"
ALIAS_DANGLING = "names no stored unit"
REPAIR = "`kg doctor --repair` re-derives it from the units"
RECOVER = ("`kg doctor --salvage` keeps every intact record (embedded store), or `kg restore DUMP --replace --yes` "
           "rebuilds from a dump")


@dataclass
class Finding:
    check: str  # one of GRAPH_CHECKS + VECTOR_CHECKS + ("units",)
    problem: str  # missing | extra | duplicate | wrong_kind | stale_live | ...
    count: int
    examples: list[str]
    repairable: bool = True
    units: list[str] = field(default_factory=list)  # units to re-derive
    nodes: list[str] = field(default_factory=list)  # nodes to (re-)embed or whose vectors to delete
    category: str = ""  # drifted | damaged | missing (default: drifted if repairable, else damaged)
    fix: str = ""  # the command that fixes it

    def __post_init__(self) -> None:
        if not self.category:
            self.category = "drifted" if self.repairable else "damaged"
        if not self.fix:
            self.fix = REPAIR if self.category == "drifted" else RECOVER

    def line(self) -> str:
        ex = ", ".join(self.examples[:5]) + (" ..." if self.count > 5 else "")
        fix = "" if self.repairable else " (not repairable automatically)"
        return f"[{self.category}] {self.check}: {self.count} {self.problem}{fix}" + (f": {ex}" if ex else "")


@dataclass
class DoctorReport:
    backend: str
    units: int = 0
    nodes: int = 0
    vectors: int | None = None  # None: vectors not checked
    vector_note: str = ""
    vector_placement: dict[str, Any] | None = None  # where vectors live and whether every process shares them
    findings: list[Finding] = field(default_factory=list)
    repaired: dict[str, Any] | None = None
    after: "DoctorReport | None" = None

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def unopenable(self) -> bool:
        """The store itself is damaged or missing: nothing else could be checked."""
        return any(f.check == "store" for f in self.findings)

    def fixes(self) -> dict[str, str]:
        """category -> the command that fixes it, for the categories found."""
        return {f.category: f.fix for f in self.findings}

    @property
    def final(self) -> "DoctorReport":
        return self.after if self.after is not None else self

    def of(self, check: str, problem: str | None = None) -> list[Finding]:
        return [f for f in self.findings if f.check == check and (problem is None or f.problem == problem)]

    def to_dict(self) -> dict[str, Any]:
        d = {"backend": self.backend, "units": self.units, "nodes": self.nodes, "vectors": self.vectors,
             "vector_note": self.vector_note, "vector_placement": self.vector_placement, "ok": self.ok,
             "findings": [{k: v for k, v in asdict(f).items() if k not in ("units", "nodes")} for f in self.findings],
             "fixes": self.fixes()}
        if self.repaired is not None:
            d["repaired"] = self.repaired
        if self.after is not None:
            d["after"] = self.after.to_dict()
        return d


# -- what the units imply ------------------------------------------------------------------

def expected_rows(units: Iterable[Unit]) -> IndexRows:
    """Every derived row the units imply, on the same shapes :meth:`GraphStore.index_rows` returns."""
    units = list(units)
    superseded = {old for u in units for old in u.supersedes}
    stored = {u.id for u in units}
    kinds: dict[str, str] = {}
    rows = IndexRows(nodes=[], subject=[], context=[], relations=[], superseded_by=[], args=[], mods=[])
    for u in units:
        f = unit_facts(u)
        for nid, (_label, kind) in f.nodes.items():
            prev = kinds.get(nid)
            if prev is None or (kind == NodeKind.DERIVED and prev == NodeKind.ENTRY.value):
                kinds[nid] = kind.value
        rows.subject.append((u.id, f.subject))
        rows.context += [(u.id, n) for n in dict.fromkeys(f.context)]
        assert rows.args is not None and rows.mods is not None
        rows.args += [(u.id, p, n) for p, n in f.args]
        rows.mods += [(u.id, s, n) for s, n in f.mods]
        live = u.id not in superseded
        rows.relations += [(s, d, k, u.id, live) for s, d, k, _ in f.relations]
        rows.relations += [(o, n, "superseded", u.id, live) for o, n in f.node_supersessions]
        rows.relations += [(b, d, "narrowed_by", u.id, live) for b, d in f.narrowings]
        # a supersession link joins two stored units: one whose older unit is retracted (in the
        # archive) or missing has none (a missing one is reported as a dangling reference)
        rows.superseded_by += [(old, u.id) for old in dict.fromkeys(f.supersedes) if old in stored]
    rows.nodes = sorted(kinds.items())
    return rows


def _fmt(row: tuple) -> str:
    return "(" + ", ".join(str(x) for x in row) + ")"


def _compare(check: str, expected: Sequence[tuple], actual: Sequence[tuple], owner: int,
             multiset: bool = False) -> list[Finding]:
    """Missing / extra rows; ``owner`` is the index of the unit id that owns a row."""
    out: list[Finding] = []
    if multiset:
        e, a = Counter(expected), Counter(actual)
        missing, extra = list((e - a).elements()), list((a - e).elements())
    else:
        e_set, a_count = set(expected), Counter(actual)
        missing = sorted(e_set - set(a_count), key=str)
        extra = sorted((r for r in a_count if r not in e_set), key=str)
        extra += sorted((r for r, c in a_count.items() if c > 1 and r in e_set for _ in range(c - 1)), key=str)
    for problem, rows in (("missing", missing), ("extra", extra)):
        if rows:
            out.append(Finding(check, problem, len(rows), [_fmt(r) for r in rows[:SHOW]],
                               units=sorted({str(r[owner]) for r in rows})))
    return out


def _graph_findings(units: list[Unit], rows: IndexRows) -> list[Finding]:
    exp = expected_rows(units)
    found: list[Finding] = []
    # nodes
    counts = Counter(n for n, _ in rows.nodes)
    dups = sorted(n for n, c in counts.items() if c > 1)
    if dups:
        found.append(Finding("nodes", "duplicate", len(dups), dups[:SHOW], repairable=False))
    have = dict(rows.nodes)
    want = dict(exp.nodes)
    missing = sorted(set(want) - set(have))
    orphans = sorted(set(have) - set(want))
    wrong = sorted(n for n in set(want) & set(have) if want[n] != have[n])
    by_node: dict[str, set[str]] = {}
    for uid, nid in exp.subject + exp.context:
        by_node.setdefault(nid, set()).add(uid)
    if missing:
        found.append(Finding("nodes", "missing", len(missing), missing[:SHOW],
                             units=sorted({u for n in missing for u in by_node.get(n, ())}), nodes=missing))
    if orphans:
        found.append(Finding("nodes", "orphan (no unit mentions it)", len(orphans), orphans[:SHOW], nodes=orphans))
    if wrong:
        found.append(Finding("nodes", "wrong_kind", len(wrong), [f"{n} is {have[n]}, units say {want[n]}" for n in wrong[:SHOW]],
                             nodes=wrong))
    found += _compare("subject_index", exp.subject, rows.subject, owner=0)
    found += _compare("context_index", exp.context, rows.context, owner=0)
    if rows.args is not None:
        found += _compare("arg_edges", exp.args or [], rows.args, owner=0, multiset=True)
    if rows.mods is not None:
        found += _compare("mod_edges", exp.mods or [], rows.mods, owner=0, multiset=True)
    # relation edges: presence by (src, dst, kind, unit); liveness separately
    e_rel = {r[:4]: r[4] for r in exp.relations}
    a_rel: dict[tuple, set[bool]] = {}
    for r in rows.relations:
        a_rel.setdefault(tuple(r[:4]), set()).add(bool(r[4]) if r[4] is not None else None)  # type: ignore[arg-type]
    found += _compare("relations", list(e_rel), list(a_rel), owner=3)
    stale = sorted((k for k in set(e_rel) & set(a_rel) if a_rel[k] != {e_rel[k]}), key=str)
    if stale:
        found.append(Finding("relations", "stale_live", len(stale),
                             [f"{_fmt(k)} live={sorted(a_rel[k], key=str)}, units say {e_rel[k]}" for k in stale[:SHOW]],
                             units=sorted({k[3] for k in stale})))
    found += _compare("supersessions", exp.superseded_by, rows.superseded_by, owner=1)
    return found


def _unit_findings(units: list[Unit], archived: Iterable[str] = ()) -> list[Finding]:
    """Duplicate ids, invalid units, references to units that exist nowhere (a unit retracted
    into the archive, ``archived``, still exists: superseding it is not dangling)."""
    found: list[Finding] = []
    counts = Counter(u.id for u in units)
    dups = sorted(i for i, c in counts.items() if c > 1)
    if dups:
        found.append(Finding("units", "duplicate id", len(dups), dups[:SHOW], repairable=False))
    invalid = [p for u in units for p in unit_text_problems(u)]
    if invalid:
        found.append(Finding("units", "invalid", len(invalid), invalid[:SHOW], repairable=False))
    ids = set(counts) | set(archived)
    dangling = sorted({f"#{u.id} -> #{r}" for u in units
                       for r in list(u.supersedes) + [m.value.unit for m in u.mods if m.value.unit is not None]
                       if r not in ids})
    if dangling:
        found.append(Finding("units", "dangling reference", len(dangling), dangling[:SHOW], repairable=False))
    return found


def _alias_findings(aliases: dict[str, str], unit_ids: set[str], archived: Iterable[str] = ()) -> list[Finding]:
    """Each alias must name a stored unit, live or ``archived`` (an alias follows its unit into
    the archive and back), and its own id must be no unit's. Why the two differ:
    validation asks about aliases only for ids that are not stored units, and ``kg dump`` leaves
    out an alias whose id is a unit's, so a shadowed alias is never read and deleting it changes
    nothing; a dangling one would point references at a unit that is gone, and only that unit
    coming back (from a dump) fixes it."""
    out: list[Finding] = []
    shadowed = sorted(d for d in aliases if d in unit_ids)
    known = unit_ids | set(archived)
    dangling = sorted(d for d, k in aliases.items() if k not in known and d not in unit_ids)
    if shadowed:
        out.append(Finding("aliases", ALIAS_SHADOWED, len(shadowed),
                           [f"#{d} -> #{aliases[d]}" for d in shadowed[:SHOW]], units=shadowed,
                           fix="`kg doctor --repair` deletes the aliases (the units keep their ids)"))
    if dangling:
        out.append(Finding("aliases", ALIAS_DANGLING, len(dangling), [f"#{d} -> #{aliases[d]}" for d in dangling[:SHOW]],
                           repairable=False, units=dangling,
                           fix="bring the units back from a dump that has them (`kg restore DUMP --merge`); `kg dump` "
                               "leaves such aliases out, so `kg restore DUMP --replace --yes` drops them"))
    return out


# -- vectors ---------------------------------------------------------------------------------

def _vector_ids(parts: Parts, report: DoctorReport) -> set[str] | None:
    from kgservice.vectors import VectorStoreMismatch

    try:
        vs = parts.vectors
        ids = vs.ids()
    except VectorStoreMismatch as exc:
        report.findings.append(Finding("vector_collection", "model mismatch", 1, [str(exc)]))
        report.vector_note = "collection embedded with another model"
        return None
    report.vectors = len(ids)
    if vs.lost_writes:  # the missing vectors are then reported below, with this as their cause
        report.vector_note = ("a writer stopped before flushing its vectors; the next write (or --repair) "
                              "embeds the nodes left without one")
    return ids


def _vector_findings(ids: set[str], nodes: dict[str, str]) -> list[Finding]:
    embeddable = {n for n, k in nodes.items() if k != NodeKind.LITERAL.value}
    out = []
    without = sorted(embeddable - ids)
    stray = sorted(ids - embeddable)
    if without:
        out.append(Finding("nodes_without_vectors", "missing vector", len(without), without[:SHOW], nodes=without))
    if stray:
        out.append(Finding("vectors_without_nodes", "stray vector", len(stray), stray[:SHOW], nodes=stray))
    return out


def _resume_restore(parts: Parts, finding: Finding, vectors: bool) -> dict[str, Any]:
    """Run the interrupted replace restore again from its dump, if that file is still the one it
    started from (identical units count as unchanged, so resuming is the same as redoing)."""
    from pathlib import Path

    from kgservice.admin.backup import file_sha256, restore
    from kgservice.errors import StoreError

    path, digest = finding.units
    if not Path(path).is_file():
        raise StoreError(f"the interrupted restore's dump {path} is gone: run `kg restore DUMP --replace --yes` "
                         "with a dump you have (the store holds part of the old content until then)")
    if file_sha256(path) != digest:
        raise StoreError(f"the interrupted restore's dump {path} has changed since the restore started: run "
                         f"`kg restore {path} --replace --yes` if it is the dump you want")
    return restore(parts, path, replace=True, embed=vectors)


def _file_findings(parts: Parts) -> list[Finding]:
    from kgservice.admin.service_files import damaged_files

    return [Finding("service_files", "damaged", 1, [f.line()], category="damaged",
                    fix=f"`kg doctor --repair` sets {f.path.name} aside and starts a new one: {f.consequence}")
            for f in damaged_files(parts.settings)]


# -- the two entry points ---------------------------------------------------------------------

def check(parts: Parts, vectors: bool = True) -> DoctorReport:
    """Compare the store (and, with ``vectors``, the vector store) with what the units imply,
    after checking the service's own files (:mod:`kgservice.admin.service_files`)."""
    files = _file_findings(parts)
    try:
        store: GraphStore = parts.store
    except StoreDamaged as exc:  # nothing else can be trusted (vectors are compared with the graph)
        report = DoctorReport(backend=parts.settings.backend, vector_note="vectors not checked: the store does not open")
        report.findings.append(Finding("store", exc.kind, 1, [exc.detail], repairable=False, category=exc.kind,
                                       fix=exc.fix))
        report.findings += files
        return report
    from kgservice.deployment import vector_placement

    report = DoctorReport(backend=store.backend, vector_placement=vector_placement(parts.settings).to_dict())
    report.findings += files
    interrupted = store.interrupted_restore()
    if interrupted is not None:  # part old content, part dump: comparing it with its units means nothing
        report.vector_note = "not checked: a restore was interrupted"
        report.findings.append(Finding(
            "restore", "interrupted", 1,
            [f"`kg restore {interrupted['path']} --replace` (started {interrupted['started_at']}, "
             f"{interrupted['units']} units) did not finish: the store holds part of the old content and "
             "part of the dump"],
            units=[str(interrupted["path"]), str(interrupted["sha256"])], category="interrupted",
            fix=f"`kg doctor --repair` resumes the restore from {interrupted['path']} (or run "
                f"`kg restore {interrupted['path']} --replace --yes` again)"))
        return report
    ids = _vector_ids(parts, report) if vectors else None  # before the graph: see the module doc
    if not vectors:
        report.vector_note = "not checked"
    try:
        units = list(store.iter_units())
    except Exception as exc:  # a unit whose stored JSON no longer parses
        report.findings.append(Finding("units", "unreadable", 1, [f"{type(exc).__name__}: {exc}"[:500]], repairable=False))
        return report
    rows = store.index_rows()
    report.units = len(units)
    node_kinds = dict(rows.nodes)
    report.nodes = len(node_kinds)
    archived = set(store.retracted_units(None))
    report.findings += _unit_findings(units, archived)
    report.findings += _graph_findings(units, rows)
    report.findings += _alias_findings(store.aliases(None), {u.id for u in units}, archived)
    if ids is not None:
        report.findings += _vector_findings(ids, node_kinds)
    return report


def repair(parts: Parts, report: DoctorReport | None = None, vectors: bool = True) -> DoctorReport:
    """Fix what :func:`check` found (running it first if ``report`` is None); returns the report
    with ``repaired`` (what was done) and ``after`` (a fresh check) filled in."""
    if parts.settings.read_only:
        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); kg doctor --repair refused")
    report = report or check(parts, vectors=vectors)
    done: dict[str, Any] = {}
    if report.of("service_files"):
        from kgservice.admin.service_files import damaged_files, rebuild

        done["service_files"] = {str(f.path): f"set aside as {rebuild(f)}; {f.consequence}"
                                 for f in damaged_files(parts.settings)}
    if report.of("restore"):
        done["restore"] = _resume_restore(parts, report.of("restore")[0], vectors)
        report.repaired = done
        report.after = check(parts, vectors=vectors)
        return report
    if report.unopenable:  # never re-derive from damaged files: say what fixes them instead
        report.repaired = {**done, "refused": "the store is " + report.findings[0].category}
        return report  # final is the report itself: the problems remain
    graph = [f for f in report.findings if f.check in GRAPH_CHECKS and f.repairable]
    if graph:
        owners = sorted({u for f in graph for u in f.units})
        done["graph"] = parts.store.rebuild_indexes(owners)
        done["graph"]["units_asked"] = len(owners)
        try:
            done["caches_cleared"] = parts.caches.clear()
        except Exception as exc:  # caches are an optimisation; say so and go on
            done["caches_cleared"] = f"failed: {type(exc).__name__}: {exc}"
    shadowed = [d for f in report.of("aliases", ALIAS_SHADOWED) for d in f.units]
    if shadowed:
        done["aliases_removed"] = parts.store.remove_aliases(shadowed)
    if vectors:
        from kgservice.stores.changelog import record_change

        nodes = {n.id: n.kind.value for n in parts.store.iter_nodes()}
        embeddable = sorted(n for n, k in nodes.items() if k != NodeKind.LITERAL.value)
        if report.of("vector_collection"):
            parts.reopen_vectors(recreate=True)
            done["vectors_recreated"] = True
            done["vectors_embedded"] = parts.node_vectors.embed(embeddable)
            # every top-k result may differ now: every server's caches clear
            record_change(parts.store, [], everything=True)
        else:
            # a writer that died before flushing: the knowledge base restores exactly that first
            # (the next write would), so the vectors are not embedded twice
            restored = parts.node_vectors.restore_lost()
            if restored:
                done["vectors_restored"] = restored
            have = parts.vectors.ids()
            stray = sorted(have - set(embeddable))
            if stray:
                parts.vectors.delete(stray)
            missing = sorted(set(embeddable) - have)
            done["vectors_deleted"] = len(stray)
            done["vectors_embedded"] = parts.node_vectors.embed(missing) if missing else 0
            from kgservice.vectors.owed import OwedVectors

            owed = OwedVectors(parts.settings.kb_dir)  # what stopped writers owed is embedded now
            owed.clear(owed.stale())
            if stray or missing:  # top-k lists these nodes left or may now enter: invalidated everywhere
                record_change(parts.store, stray + missing)
            parts.caches.invalidate(stray + missing)
            # Neo4j's vector index: one population again, the shape of a freshly built index
            # (small ingests each left a Lucene segment that every search walks in full)
            rebuild_index = getattr(parts.vectors, "rebuild_index", None)  # Neo4j's vectors only
            if rebuild_index is not None:
                done["vector_index_rebuilt"] = rebuild_index()
    report.repaired = done
    report.after = check(parts, vectors=vectors)
    return report
