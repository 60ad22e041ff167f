"""The embedded graph store: networkx in process, persisted as one snapshot file.

Zero setup for one user. Writes are atomic (temp file, fsync, rename) and serialised
across processes by an exclusive lock on the data directory; a process that finds the
snapshot newer than its copy reloads before applying its batch, so two CLI runs never
overwrite each other's units.
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import networkx as nx

from kgservice.ids import is_literal_id
from kgservice.model import IngestReport, Node, NodeKind, Unit
from kgservice.stores.base import MAX_CLOSURE_DEPTH, GraphStore, StoreError
from kgservice.stores.facts import unit_facts
from kgservice.stores.validate import prepare_batch

SNAPSHOT = "graph.pkl"
FORMAT_VERSION = 1
BIDIRECTIONAL = {"synonym", "belongs_to", "of", "related_to"}


class _State:
    def __init__(self) -> None:
        self.graph = nx.MultiDiGraph()
        self.units: dict[str, Unit] = {}
        self.subject: dict[str, set[str]] = defaultdict(set)
        self.context: dict[str, set[str]] = defaultdict(set)
        self.superseded_by: dict[str, set[str]] = defaultdict(set)
        self.generation = 0


class EmbeddedStore(GraphStore):
    backend = "embedded"

    def __init__(self, data_dir: Path | str):
        self.dir = Path(data_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / SNAPSHOT
        self._loaded_mtime: float | None = None
        self.s = self._load()

    # -- persistence ----------------------------------------------------------
    def _load(self) -> _State:
        if not self.path.exists():
            self._loaded_mtime = None
            return _State()
        try:
            with self.path.open("rb") as fh:
                version, state = pickle.load(fh)
        except Exception as exc:  # a torn or foreign file must not be silently replaced
            raise StoreError(f"cannot read embedded store snapshot {self.path}: {exc}") from exc
        if version != FORMAT_VERSION:
            raise StoreError(f"{self.path} has store format {version}, this kgservice reads {FORMAT_VERSION}")
        self._loaded_mtime = self.path.stat().st_mtime_ns
        return state

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        with (self.dir / ".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                current = self.path.stat().st_mtime_ns if self.path.exists() else None
                if current != self._loaded_mtime:
                    self.s = self._load()
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _persist(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        try:
            with tmp.open("wb") as fh:
                pickle.dump((FORMAT_VERSION, self.s), fh, protocol=pickle.HIGHEST_PROTOCOL)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._loaded_mtime = self.path.stat().st_mtime_ns

    # -- writes ---------------------------------------------------------------
    def ingest(self, units: Sequence[Unit], progress: Callable[[int], None] | None = None) -> IngestReport:
        with self._write_lock():
            new, unchanged = prepare_batch(units, lambda ids: {i: self.s.units[i] for i in ids if i in self.s.units})
            report = IngestReport(units_unchanged=unchanged)
            if not new:
                return report
            try:
                touched = self._apply(new, report, progress)
                self.s.generation += 1
                self._persist()
            except BaseException:
                # in-memory state may be half-applied: go back to what is on disk
                self.s = self._load() if self.path.exists() else _State()
                raise
            report.units_added = len(new)
            report.touched_nodes = sorted(touched)
            return report

    def _apply(self, new: list[Unit], report: IngestReport, progress: Callable[[int], None] | None) -> set[str]:
        s = self.s
        g = s.graph
        touched: set[str] = set()
        for i, unit in enumerate(new):
            f = unit_facts(unit)
            s.units[unit.id] = unit
            for nid, (label, kind) in f.nodes.items():
                touched.add(nid)
                if nid not in g:
                    g.add_node(nid, label=label, kind=kind.value)
                    report.nodes_added += 1
                    if kind != NodeKind.LITERAL:
                        report.new_embeddable_nodes.append(nid)
                elif kind == NodeKind.DERIVED and g.nodes[nid]["kind"] == NodeKind.ENTRY.value:
                    g.nodes[nid]["kind"] = kind.value
            s.subject[f.subject].add(unit.id)
            for nid in f.context:
                s.context[nid].add(unit.id)
            for src, dst, kind, family in f.relations:
                g.add_edge(src, dst, key=unit.id, kind=kind, family=family, unit=unit.id)
            for old, newer in f.node_supersessions:
                g.add_edge(old, newer, key=unit.id, kind="superseded", family=unit.family, unit=unit.id)
            for base, derived in f.narrowings:
                g.add_edge(base, derived, key=unit.id, kind="narrowed_by", family=unit.family, unit=unit.id)
            for old in f.supersedes:
                s.superseded_by[old].add(unit.id)
            if progress is not None and (i + 1) % 1000 == 0:
                progress(1000)
        if progress is not None:
            progress(len(new) % 1000)
        return touched

    # -- units and nodes ------------------------------------------------------
    def get_units(self, ids: Iterable[str]) -> list[Unit]:
        return [self.s.units[i] for i in ids if i in self.s.units]

    def iter_units(self) -> Iterator[Unit]:
        yield from list(self.s.units.values())

    def _node(self, nid: str) -> Node:
        d = self.s.graph.nodes[nid]
        return Node(id=nid, label=d["label"], kind=NodeKind(d["kind"]))

    def get_nodes(self, ids: Iterable[str]) -> list[Node]:
        return [self._node(i) for i in ids if i in self.s.graph]

    def iter_nodes(self) -> Iterator[Node]:
        for nid in list(self.s.graph.nodes):
            yield self._node(nid)

    def counts(self) -> dict[str, int]:
        s = self.s
        out = {
            "units": len(s.units),
            "nodes": s.graph.number_of_nodes(),
            "relations": sum(1 for *_, k in s.graph.edges(data="kind") if k not in ("superseded", "narrowed_by")),
            "superseded_units": sum(1 for u in s.superseded_by if s.superseded_by[u]),
        }
        for u in s.units.values():
            out[f"kind:{u.kind}"] = out.get(f"kind:{u.kind}", 0) + 1
        return out

    # -- procedures -------------------------------------------------------------
    def _live(self, unit_id: str) -> bool:
        return not self.s.superseded_by.get(unit_id)

    def subject_mentions(self, node_id: str) -> list[str]:
        return sorted(self.s.subject.get(node_id, ()))

    def context_mentions(self, node_id: str) -> list[str]:
        return sorted(self.s.context.get(node_id, ()))

    def _edges(self, node_id: str, kind: str, out: bool) -> list[str]:
        g = self.s.graph
        if node_id not in g:
            return []
        it = g.out_edges(node_id, data=True) if out else g.in_edges(node_id, data=True)
        return sorted({(v if out else u) for u, v, d in it if d["kind"] == kind and self._live(d["unit"])})

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
                for m in self._edges(n, "synonym", True) + self._edges(n, "synonym", False):
                    if m not in seen:
                        seen.add(m)
                        nxt.append(m)
            frontier = nxt
            if not frontier:
                break
        return sorted(seen)

    def belongs_to_parents(self, node_ids: Sequence[str]) -> list[str]:
        return sorted({p for n in node_ids for p in self._edges(n, "belongs_to", True)})

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
        result: dict[str, list[str]] = {}
        for uid in unit_ids:
            ends: set[str] = set()
            seen = {uid}
            todo = [uid]
            while todo:
                u = todo.pop()
                nxt = self.s.superseded_by.get(u) or set()
                if not nxt:
                    ends.add(u)
                for v in nxt:
                    if v not in seen:
                        seen.add(v)
                        todo.append(v)
            result[uid] = sorted(ends)
        return result

    def node_superseded_end(self, node_id: str) -> list[str]:
        ends: set[str] = set()
        seen = {node_id}
        todo = [node_id]
        while todo:
            n = todo.pop()
            nxt = self._edges(n, "superseded", True)
            if not nxt:
                ends.add(n)
            for m in nxt:
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return sorted(ends)

    def spread_step(self, frontier: Mapping[str, float], tau: Mapping[str, float]) -> dict[str, float]:
        g = self.s.graph
        incoming: dict[str, float] = {}
        for n in sorted(frontier):
            if n not in g:
                continue
            steps: set[tuple[str, str]] = set()
            for _, m, d in g.out_edges(n, data=True):
                if (d["kind"] in BIDIRECTIONAL or d["kind"] == "content") and self._live(d["unit"]):
                    steps.add((m, d["kind"]))
            for m, _, d in g.in_edges(n, data=True):
                if d["kind"] in BIDIRECTIONAL and self._live(d["unit"]):
                    steps.add((m, d["kind"]))
            for m, kind in sorted(steps):
                t = tau.get(kind, 0.0)
                if t > 0 and not is_literal_id(m):
                    incoming[m] = incoming.get(m, 0.0) + frontier[n] * t
        return incoming
