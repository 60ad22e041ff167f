"""The ingest write path of the Neo4j store.

Neo4j backend: the same store interface, each method one Cypher file from ``cypher/``.

Writes go through managed write transactions (the driver retries transient errors
inside ``execute_write``). A batch of up to ``stage_units`` new units is one transaction,
so it is fully in or fully out. A bigger batch would need more transaction memory than a
server has (200k units: > 700 MiB), so it is *staged*: written in bounded transactions under
labels no read matches (``:StagedNode``, ``:StagedUnit``, tagged with a stage id), then
published in one transaction that relabels them and adds the batch's node-to-node relations
and supersessions (see :meth:`Neo4jStore._publish_steps`). Readers see the batch before or
after, never part of it; a failed stage is discarded, and one left by a crashed writer is
invisible and removed by the next big ingest once it is ``STAGE_STALE_SECONDS`` old. On top of that the *whole* ingest - validation included - is retried with
bounded backoff when the server goes away (ServiceUnavailable, SessionExpired, transient
errors) or a concurrent writer stored the same unit first (a uniqueness-constraint race):
re-validating turns the other writer's units into "unchanged", so overlapping ingests from
several processes converge without duplicates. Connecting retries with bounded backoff
(tenacity) and then fails with a message that says where it tried and what to check.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from tenacity import Retrying, retry_if_exception, stop_after_attempt, stop_after_delay, wait_exponential

from kgservice.model import IngestReport, NodeKind, Unit
from kgservice.outage import is_outage
from kgservice.notation.serializer import format_unit
from kgservice.stores import cypher
from kgservice.errors import ReadOnlyError, StoreError
from kgservice.stores.changelog import neo4j_change_step
from kgservice.stores.facts import unit_facts
from kgservice.stores.neo4j.connection import Neo4jConnection, Neo4jUnavailable, on_leader
from kgservice.stores.validate import fact_probe, paused_gc, prepare_batch

BATCH_ROWS = 5000
STAGE_STALE_SECONDS = 900.0  # a stage without progress for this long was abandoned by its writer
CONSTRAINT_RACE = "Neo.ClientError.Schema.ConstraintValidationFailed"


def _unit_row(u: Unit, f: Any, eid: Mapping[str, str] | None = None) -> dict:
    """A unit's row for ingest_units (node references as element ids, ``eid``) or, without
    ``eid``, for the staged path (node ids). ``probe`` is :func:`unit_probe` built from the
    facts' ids (the same normalised ids, without normalising again).

    Beside its JSON (the unit itself) a unit stores what a statement reads (``family``: causal
    chains, ``kind``: counts, ``probe``: the duplicate check) and what a person reads in Neo4j
    Browser (``text``, ``predicate``, ``doc``, ``mode``, ``ingested_at``: docs/browser-guide.md
    queries ``u.text`` and names the others in its model). The JSON leaves out fields at their defaults (``inverse`` false, no mods, no
    supersedes), which every reader fills back in (``Unit.model_validate_json``): a typical unit's
    JSON then fits two 120-byte string records instead of three."""
    ref = eid.__getitem__ if eid is not None else str
    key = "node" if eid is not None else "id"
    return {"id": u.id, "json": u.model_dump_json(exclude_defaults=True), "text": format_unit(u),
            "subject": ref(f.subject), "predicate": u.predicate, "family": u.family, "kind": u.kind, "doc": u.doc,
            "mode": u.mode, "ingested_at": u.ingested_at, "probe": _probe(f.subject, f.args[0][1]),
            "args": [{"pos": p, key: ref(n)} for p, n in f.args],
            "mods": [{"slot": s, key: ref(n)} for s, n in f.mods]}


@dataclass
class _EarlyWrite:
    """A batch's write transaction opened before validation (:meth:`Neo4jStore._early_write`):
    ``nodes`` is the pending existing_nodes result for the node ids in ``asked``."""
    tx: Any
    asked: set[str]
    nodes: Any



def _probe(subject: str, arg0: str) -> str:
    """Unit.probe from a subject id and an argument-0 id, joined by U+001F, which node ids
    never contain (unit_probes_backfill.cypher builds the same string from the graph)."""
    return f"{subject}\x1f{arg0}"


def unit_probe(u: Unit) -> str:
    """The key a stored unit is found by when a batch is checked for duplicates (Unit.probe,
    indexed; live_fact_units): its subject id and argument-0 id (:func:`fact_probe`)."""
    return _probe(*fact_probe(u))


def _fact_probes(units: Sequence[Unit]) -> list[str]:
    """live_fact_units' probes for a batch (sorted, distinct). A unit that has no probe (no
    argument: invalid, and rejected by validation with its own message) is skipped."""
    probes = set()
    for u in units:
        try:
            probes.add(unit_probe(u))
        except (IndexError, AttributeError, TypeError, ValueError):
            continue
    return sorted(probes)


def _split_supersessions(pairs: list[dict], in_batch: set[str],
                         rel_rows: list[dict]) -> tuple[list[dict], list[str], list[dict]]:
    """A batch's supersession pairs, distinct; the stored units among the superseded ones
    (their edges are retired by retire_superseded); and the batch's relation rows with the
    edges of units the batch supersedes itself marked ``live: False`` (created retired)."""
    pairs = list({(p["old"], p["new"]): p for p in pairs}.values())
    inner = {p["old"] for p in pairs if p["old"] in in_batch}
    olds = sorted({p["old"] for p in pairs} - inner)
    return pairs, olds, [r | {"live": False} if r["unit"] in inner else r for r in rel_rows]


def _retire_steps(olds: list[str]) -> list[tuple[str, dict]]:
    return [(cypher.load("retire_superseded"), {"olds": olds[i:i + BATCH_ROWS]})
            for i in range(0, len(olds), BATCH_ROWS)]


def _retired_ends(results: Iterable[Any]) -> set[str]:
    """The node ids at the ends of the edges retire_superseded retired (its ``retired`` rows)."""
    return {n for result in results for row in result for ends in row["retired"] for n in ends}


def _retryable(exc: BaseException) -> bool:
    """Worth re-running the whole ingest: the server went away or was busy, or a concurrent
    writer created the same unit/node first (re-validation then counts it as unchanged)."""
    from neo4j.exceptions import DriverError, Neo4jError

    if is_outage(exc):  # the shared classifier: the server went away (wrapped or not)
        return True
    if isinstance(exc, Neo4jError):
        if exc.code == CONSTRAINT_RACE:
            return True
        if exc.code and "MemoryPoolOutOfMemoryError" in exc.code:
            return False  # the same transaction needs the same memory: retrying cannot help
        return bool(exc.is_retryable())
    if isinstance(exc, DriverError):
        return bool(exc.is_retryable())
    return isinstance(exc, (ConnectionError, TimeoutError))


# SpreadParams fields kg.spreadLists implements; any other knob at a non-default value
# sends the spread down the Cypher hop loop instead of being silently ignored.
class Neo4jWrites(Neo4jConnection):
    """Ingest: one batch, one transaction (or staged when big); the whole ingest retried."""

    # given by sibling mixins of Neo4jStore (Neo4jAdmin, Neo4jProcedures): annotations only, so
    # no class attribute here shadows theirs (Neo4jWrites precedes them in the store's MRO)
    alias_states: Callable[[Iterable[str]], dict[str, tuple[str, bool]]]
    plugin_procedures: Callable[[], set[str]]

    def ingest(self, units: Sequence[Unit], progress: Callable[[int], None] | None = None) -> IngestReport:
        """One batch, one transaction; the whole ingest (validation included) is retried on
        transient failures and constraint races, within ``ingest_attempts`` / ``ingest_max_seconds``."""
        if self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); ingest refused")
        tries = 0
        try:
            for attempt in Retrying(retry=retry_if_exception(_retryable), reraise=True,
                                    stop=stop_after_attempt(self.ingest_attempts) | stop_after_delay(self.ingest_max_seconds),
                                    wait=wait_exponential(multiplier=0.25, max=self.ingest_wait_max),
                                    before_sleep=self._count_retry):
                # validation reads on the leader: a lagging secondary would miss a unit another
                # process just stored, and the same fact would be stored twice under two ids
                with attempt, paused_gc(), on_leader():  # bulk row building and packing: see paused_gc
                    tries += 1
                    return self._ingest_once(units, progress)
        except Exception as exc:
            from neo4j.exceptions import Neo4jError

            if isinstance(exc, Neo4jError) and exc.code and "MemoryPoolOutOfMemoryError" in exc.code:
                raise StoreError(
                    f"ingest of {len(units)} unit(s) into {self.where} ran out of Neo4j transaction memory "
                    f"({exc.message}); nothing was stored. Batches of more than {self.stage_units} new units "
                    "are staged in bounded transactions: lower KG_NEO4J_STAGE_UNITS, or give the server more "
                    "(dbms.memory.transaction.total.max, heap: KG_NEO4J_HEAP / KG_NEO4J_TX_MAX for scripts/neo4j)."
                ) from exc
            if not _retryable(exc):
                raise

            cause = exc.__cause__ if isinstance(exc, Neo4jUnavailable) and exc.__cause__ else exc
            what = f"{type(cause).__name__}: {cause.message if isinstance(cause, Neo4jError) else cause}"
            cls = StoreError if isinstance(exc, Neo4jError) and exc.code == CONSTRAINT_RACE else Neo4jUnavailable
            raise cls(
                f"ingest of {len(units)} unit(s) into {self.where} failed after {tries} attempt(s) ({what}). "
                "The batch is one transaction, so it is either fully stored or not at all; run the same "
                "ingest again when Neo4j answers (`scripts/neo4j status`): units already stored count as unchanged."
            ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _count_retry(self, state: Any) -> None:
        self.ingest_retries += 1

    def _ingest_once(self, units: Sequence[Unit], progress: Callable[[int], None] | None = None) -> IngestReport:
        def read_units(ids: list[str]) -> dict[str, Unit]:
            return {r["id"]: Unit.model_validate_json(r["json"]) for r in self.read("get_units", ids=ids)}

        # Validation's three reads are sent before it starts, each on its own session from a
        # worker thread: the server runs them (on the second core) while this thread checks
        # the batch's texts, instead of one after the other behind it.
        # 1. The stored units among the batch's ids and the ids it refers to (what
        #    prepare_batch asks `existing` for first; any other ids are read when asked).
        # 2. Only live units with the same subject and argument-0 node as a unit of this batch
        #    can share its fact key; the server narrows to those (live_fact_units) instead of
        #    shipping every live unit about each subject (hub subjects: most of the store).
        #    Asking for units that turn out unchanged too only adds live units sharing a pair
        #    with the batch: a duplicate found through them is one.
        asked = {u.id for u in units} | {s for u in units for s in u.supersedes}
        asked |= {m.value.unit for u in units for m in u.mods if m.value.unit is not None}
        stored = self._prefetch(lambda: read_units(sorted(asked)))
        # 3. The merge memory of the same ids (the ones prepare_batch may ask about are among them);
        #    an alias whose unit is retracted is not in force, and goes if a new unit takes its id
        known_aliases = self._prefetch(lambda: self.alias_states(sorted(asked)))
        dormant: set[str] = set()
        probes = _fact_probes(units)
        live = self._prefetch(lambda: [Unit.model_validate_json(r["json"]) for r in
                                       self.read("live_fact_units", probes=probes)]) if probes else None

        def existing(ids: Iterable[str]) -> dict[str, Unit]:
            ids = list(ids)
            if not asked.issuperset(ids):
                return read_units(ids)
            got = stored.result()
            return {i: got[i] for i in ids if i in got}

        def live_about(subjects: list[str]) -> list[Unit]:
            return live.result() if live is not None else []

        def aliases(ids: list[str]) -> dict[str, str]:
            got = known_aliases.result() if asked.issuperset(ids) else self.alias_states(ids)
            dormant.update(i for i in ids if i in got and not got[i][1])
            return {i: got[i][0] for i in ids if i in got and got[i][1]}

        with self._early_write(units) as early:
            return self._validate_and_write(units, existing, live_about, aliases, early,
                                            (stored, live, known_aliases), progress, dormant)

    @contextmanager
    def _early_write(self, units: Sequence[Unit]) -> Iterator[_EarlyWrite | None]:
        """The batch's write transaction, opened before validation with its first read sent:
        the stored nodes among every node the batch's units mention (existing_nodes). The
        server runs that read while the client validates (off the critical path), inside the
        same transaction as the writes that rely on its element ids. Rolled back unless committed
        (a rejected batch, one with nothing new, a staged one). None when a unit's facts cannot
        be built (an invalid batch: validation says why) or the batch is big enough to be
        staged. Transient errors here reach :meth:`ingest`'s retry of the whole ingest."""
        if len(units) > self.stage_units:
            yield None
            return
        try:
            ids = sorted({n for u in units for n in unit_facts(u).nodes})
        except (AssertionError, AttributeError, IndexError, KeyError, TypeError, ValueError):
            yield None
            return
        with self._session(write=True) as session:
            tx = session.begin_transaction()
            try:
                yield _EarlyWrite(tx, set(ids), tx.run(cypher.load("existing_nodes"), ids=ids))
            finally:
                if not tx.closed():
                    tx.close()  # rolls back what was not committed

    def _validate_and_write(self, units: Sequence[Unit], existing: Callable[[Iterable[str]], dict[str, Unit]],
                            live_about: Callable[[list[str]], list[Unit]],
                            aliases: Callable[[list[str]], dict[str, str]], early: _EarlyWrite | None,
                            reads: tuple[Any, ...], progress: Callable[[int], None] | None,
                            dormant: set[str] = frozenset()) -> IngestReport:  # type: ignore[assignment]
        dups: dict[str, str] = {}
        try:
            new, unchanged = prepare_batch(units, existing, live_about, dups, aliases,
                                           archived=lambda ids: set(self.retracted_units(ids)))
        finally:
            for f in reads:
                if f is not None and not f.done():
                    f.cancel()  # validation failed first: nobody waits for the read
        report = IngestReport(units_unchanged=unchanged, duplicates=dups)
        # merged duplicates become (:UnitAlias) in the transaction that makes the batch visible
        # (_commit_steps), so a later batch can supersede / refer to them by their own id
        alias_rows: list[dict[str, str | None]] = [{"id": d, "unit": k} for d, k in sorted(dups.items())]
        if not new:
            if alias_rows:
                self.add_aliases(dups)
            return report
        # a new unit that takes the id of an archived unit's alias: the alias goes in the same write
        alias_rows += [{"id": u.id, "unit": None} for u in new if u.id in dormant]
        node_rows, unit_facts_, rel_rows, pairs, touched = self._batch_rows(new)

        staged = len(unit_facts_) > self.stage_units
        if staged:
            unit_rows = [_unit_row(u, f) for u, f in unit_facts_]
            created, fresh = self._ingest_staged(node_rows, unit_rows, rel_rows, pairs, touched, progress,
                                                 alias_rows)
        elif early is not None:
            created, fresh = self._write_batch(early.tx, node_rows, unit_facts_, rel_rows, pairs, touched,
                                               progress, alias_rows, early)
            early.tx.commit()
        else:
            def work(tx: Any) -> tuple[int, list[str]]:
                return self._write_batch(tx, node_rows, unit_facts_, rel_rows, pairs, touched, progress, alias_rows)

            with self._session(write=True) as session:
                created, fresh = session.execute_write(work)
        if not staged:
            # ingest_new_nodes CREATEd exactly these rows in the committed transaction, so the
            # labels are the stored ones: the ingest embeds them without reading them back.
            # Staged batches create nodes outside it: read back there.
            label = {r["id"]: r["label"] for r in node_rows}
            report.new_labels.update((nid, label[nid]) for nid in fresh)
        report.units_added = len(new)
        report.nodes_added = created
        report.new_embeddable_nodes = fresh
        report.touched_nodes = sorted(touched)
        return report

    @staticmethod
    def _batch_rows(new: Sequence[Unit]) -> tuple[list[dict], list[tuple[Unit, Any]], list[dict], list[dict], set[str]]:
        """The rows a batch of validated new units writes: nodes (id order), units with their
        facts (id order), node-to-node relations, supersession pairs, and the touched node ids."""
        nodes: dict[str, tuple[str, NodeKind]] = {}
        unit_facts_: list[tuple[Unit, Any]] = []
        rel_rows, pairs = [], []
        touched: set[str] = set()
        for u in new:
            f = unit_facts(u)
            for nid, (label, kind) in f.nodes.items():
                prev = nodes.get(nid)
                if prev is None or (kind == NodeKind.DERIVED and prev[1] == NodeKind.ENTRY):
                    nodes[nid] = (label, kind)
            touched.update(f.nodes)
            unit_facts_.append((u, f))
            # once per (src, dst, kind) and unit, like the embedded store: {a} [has] {b} {b} is one edge
            rel_rows += [{"src": s, "dst": d, "kind": k, "family": fam, "unit": u.id} for s, d, k, fam in dict.fromkeys(f.relations)]
            rel_rows += [{"src": o, "dst": n, "kind": "superseded", "family": u.family, "unit": u.id}
                         for o, n in dict.fromkeys(f.node_supersessions)]
            rel_rows += [{"src": b, "dst": d, "kind": "narrowed_by", "family": u.family, "unit": u.id}
                         for b, d in dict.fromkeys(f.narrowings)]
            pairs += [{"old": old, "new": u.id} for old in f.supersedes]
        # rows in id order: concurrent writers then take index-entry locks in the same order,
        # which keeps deadlocks (retried, but slow) rare
        node_rows = [{"id": nid, "label": nodes[nid][0], "kind": nodes[nid][1].value} for nid in sorted(nodes)]
        unit_facts_.sort(key=lambda uf: uf[0].id)

        return node_rows, unit_facts_, rel_rows, pairs, touched

    def _write_batch(self, tx: Any, node_rows: list[dict], units: list[tuple[Unit, Any]], rel_rows: list[dict],
                     pairs: list[dict], touched: set[str], progress: Callable[[int], None] | None,
                     aliases: Sequence[dict] = (), early: _EarlyWrite | None = None,
                     also_units: Iterable[str] = ()) -> tuple[int, list[str]]:
        """The one transaction of a batch of up to ``stage_units`` new units (``units``: each
        with its :func:`unit_facts`, in id order).

        Nodes are looked up once (existing_nodes, which also returns their element ids and
        kinds); the absent ones are CREATEd (ingest_new_nodes) and the statements that link
        units and relations to nodes find them by element id. Finding nodes by :Node(id)
        inside a write transaction takes a locking unique-index seek per subject, argument,
        modifier and relation end; element ids are direct record reads.

        The unit rows (JSON, notation text) are built one chunk at a time while the server
        runs the previous statement: ``tx.run`` returns once the server has accepted a query,
        and the next ``tx.run`` waits for it to finish, so the client's row building overlaps
        the server's writes instead of preceding them. Returns (nodes created, new non-literal
        node ids)."""
        q = self._write_queries()
        nodes_query, units_query = q["nodes"], q["units"]  # loaded cypher files, by name
        if early is not None and early.asked.issuperset(r["id"] for r in node_rows):
            row = early.nodes.single()  # sent in this transaction before validation (_early_write)
        else:
            row = tx.run(cypher.load("existing_nodes"), ids=[r["id"] for r in node_rows]).single()
        eid = dict(zip(row["ids"], row["eids"]))
        stored_kind = dict(zip(row["ids"], row["kinds"]))
        new_nodes = [r for r in node_rows if r["id"] not in eid]
        # a stored entry node that this batch sees as derived becomes derived (never back)
        upgrades = [r for r in node_rows if r["kind"] == NodeKind.DERIVED.value
                    and r["id"] in eid and stored_kind[r["id"]] != NodeKind.DERIVED.value]
        for i in range(0, len(new_nodes), BATCH_ROWS * 4):
            got = tx.run(nodes_query, nodes=new_nodes[i:i + BATCH_ROWS * 4]).single()
            eid.update(zip(got["ids"], got["eids"]))
        pending = [tx.run(cypher.load("ingest_nodes"), nodes=upgrades[i:i + BATCH_ROWS])
                   for i in range(0, len(upgrades), BATCH_ROWS)]
        # stored units this batch supersedes: their edges are retired before the batch's own
        # edges exist in the transaction (retire_superseded says why); units superseded inside
        # the batch get their edges created retired
        pairs, olds, rel_rows = _split_supersessions(pairs, {u.id for u, _ in units}, rel_rows)
        retiring = [tx.run(q, params) for q, params in _retire_steps(olds)]
        chunk = max(1, BATCH_ROWS // 2)  # units per statement: the next chunk's rows are built meanwhile
        for i in range(0, len(units), chunk):
            part = [_unit_row(u, f, eid) for u, f in units[i:i + chunk]]
            pending.append(tx.run(units_query, units=part))
            if progress is not None:
                progress(len(part))
        linked = [r | {"src": eid[r["src"]], "dst": eid[r["dst"]]} for r in rel_rows]
        for result in pending:
            result.consume()
        # the change log needs the ends of the retired edges (the superseding unit need not
        # mention them, yet their spreading rows changed)
        retired = _retired_ends(retiring)
        self._run_relation_steps(tx, self._relation_steps(linked, pairs, q["relations"]))
        listed = {u.id for u, _ in units} | set(also_units)
        for query, params in self._commit_steps(touched | retired, aliases, listed):
            tx.run(query, params).consume()
        fresh = [r["id"] for r in new_nodes if r["kind"] != NodeKind.LITERAL.value]
        return len(new_nodes), fresh

    def _write_queries(self) -> dict[str, str]:
        """The statements that create a batch's nodes, units and relations: kgservice's plugin
        procedures (kg.createNodes / createUnits / createRelations: the same writes through the
        kernel API, without the Cypher runtime's row handling; with replan=skip 0.62x the server
        CPU per 10k units at 100k, scripts/bench/RESULTS.md) when the server has them, else the
        Cypher files. ``write_engine`` ('auto' | 'plugin' | 'cypher') lets benchmarks and tests
        pick one."""
        engine = self.write_engine
        if engine == "auto":
            if self.use_plugin_writes is None:
                self.use_plugin_writes = {"kg.createNodes", "kg.createUnits", "kg.createRelations"} <= \
                    self.plugin_procedures()
            engine = "plugin" if self.use_plugin_writes else "cypher"
        if engine == "plugin":
            return {"nodes": cypher.load("plugin_create_nodes"), "units": cypher.load("plugin_create_units"),
                    "relations": cypher.load("plugin_create_relations")}
        return {"nodes": cypher.load("ingest_new_nodes"), "units": cypher.load("ingest_units"),
                "relations": cypher.load("ingest_relations")}

    # -- big batches: stage in bounded transactions, publish in one ------------------------
    @staticmethod
    def _relation_steps(rel_rows: list[dict], pairs: list[dict], query: str) -> list[tuple[str, dict]]:
        """A batch's node-to-node relations, then its supersession edges between units.
        ``query``: ingest_relations or its plugin form (ends given as element ids), or
        publish_relations (ends given as node ids)."""
        return ([(query, {"rels": rel_rows[i:i + BATCH_ROWS]})
                 for i in range(0, len(rel_rows), BATCH_ROWS)]
                + [(cypher.load("link_supersessions"), {"pairs": pairs[i:i + BATCH_ROWS]})
                   for i in range(0, len(pairs), BATCH_ROWS)])

    @staticmethod
    def _run_relation_steps(tx: Any, steps: list[tuple[str, dict]]) -> None:
        for query, params in steps:
            tx.run(query, params).consume()

    def _commit_steps(self, touched: set[str], aliases: Sequence[dict] = (),
                      units: Iterable[str] | None = None) -> list[tuple[str, dict]]:
        """Statements run last inside the transaction that makes a batch visible (the one
        ingest transaction, or a staged batch's publish transaction): the duplicates the batch
        merged away, as aliases ({id, unit} rows, aliases_record.cypher; a row with unit None is
        an id that became a unit of its own, whose alias goes: aliases_drop.cypher), and the
        change log of ``touched`` node ids (and the ``units`` stored or removed) that keeps every
        process's caches and indexes coherent."""
        record = [a for a in aliases if a["unit"] is not None]
        steps = [(cypher.load("aliases_record"), {"aliases": record[i:i + BATCH_ROWS]})
                 for i in range(0, len(record), BATCH_ROWS)]
        drop = sorted(a["id"] for a in aliases if a["unit"] is None)
        if drop:
            steps.append((cypher.statements("aliases_drop")[0], {"ids": drop}))
        return steps + [neo4j_change_step(touched, units)]

    def _publish_steps(self, stage: str, upgrades: list[dict], rel_rows: list[dict],
                       pairs: list[dict]) -> tuple[list[tuple[str, dict]], list[tuple[str, dict]]]:
        """The publish transaction of a staged batch, in order (after the retirement of the
        stored units it supersedes, :func:`_retire_steps`): relabel the staged nodes and units
        (stage_publish), upgrade existing nodes seen as derived; then (second list) the
        relations and supersession edges. :meth:`_commit_steps` follows them."""
        steps: list[tuple[str, dict]] = [(stmt, {"stage": stage}) for stmt in cypher.statements("stage_publish")]
        steps += [(cypher.load("ingest_nodes"), {"nodes": upgrades[i:i + BATCH_ROWS]})
                  for i in range(0, len(upgrades), BATCH_ROWS)]
        return steps, self._relation_steps(rel_rows, pairs, cypher.load("publish_relations"))

    def _ingest_staged(self, node_rows: list[dict], unit_rows: list[dict], rel_rows: list[dict], pairs: list[dict],
                       touched: set[str], progress: Callable[[int], None] | None,
                       aliases: Sequence[dict] = ()) -> tuple[int, list[str]]:
        import time
        import uuid

        self.discard_abandoned_stages()
        stage = uuid.uuid4().hex
        present = set(self.read("existing_nodes", ids=[r["id"] for r in node_rows])[0]["ids"])
        new_nodes = [r for r in node_rows if r["id"] not in present]
        upgrades = [r for r in node_rows if r["id"] in present and r["kind"] == NodeKind.DERIVED.value]
        staged = []
        for r in unit_rows:
            edges = [{"type": "SUBJECT", "id": r["subject"], "new": r["subject"] not in present, "props": {}}]
            edges += [{"type": "ARG", "id": a["id"], "new": a["id"] not in present, "props": {"pos": a["pos"]}}
                      for a in r["args"]]
            edges += [{"type": "MOD", "id": m["id"], "new": m["id"] not in present, "props": {"slot": m["slot"]}}
                      for m in r["mods"]]
            staged.append({k: v for k, v in r.items() if k not in ("subject", "args", "mods")} | {"edges": edges})

        def run(query: str, **params: Any) -> Any:
            with self._session(write=True) as session:
                return session.execute_write(lambda tx: tx.run(query, params).data())

        # supersessions inside the batch are staged (an edge between two staged units) and the
        # superseded units' relations are created already retired: the publish transaction
        # then only links units stored before (its index seeks on ids relabelled in the same
        # transaction are slow, and each retire pass costs transaction memory)
        in_batch = {r["id"] for r in unit_rows}
        pairs, olds, rel_rows = _split_supersessions(pairs, in_batch, rel_rows)
        inner = [p for p in pairs if p["old"] in in_batch]
        pairs = [p for p in pairs if p["old"] not in in_batch]
        run(cypher.load("stage_begin"), stage=stage, now=time.time())
        try:
            for i in range(0, len(new_nodes), BATCH_ROWS * 4):
                run(cypher.load("stage_nodes"), stage=stage, nodes=new_nodes[i:i + BATCH_ROWS * 4])
            for i in range(0, len(staged), self.stage_chunk):
                self._stage_chunk(run, stage, staged[i:i + self.stage_chunk])
                if progress is not None:
                    progress(len(staged[i:i + self.stage_chunk]))
            for i in range(0, len(inner), BATCH_ROWS):
                run(cypher.load("stage_supersessions"), stage=stage, pairs=inner[i:i + BATCH_ROWS])

            def publish(tx: Any) -> int:
                nodes = 0
                retired = _retired_ends([tx.run(q, params) for q, params in _retire_steps(olds)])
                labels, relations = self._publish_steps(stage, upgrades, rel_rows, pairs)
                for query, params in labels:
                    rows = tx.run(query, params).data()
                    nodes += rows[0]["nodes"] if rows and "nodes" in rows[0] else 0
                self._run_relation_steps(tx, relations)
                for query, params in self._commit_steps(touched | retired, aliases, [r["id"] for r in unit_rows]):
                    tx.run(query, params).consume()
                return nodes

            with self._session(write=True) as session:
                created = session.execute_write(publish)
        except BaseException:
            self._discard_stage_quietly(stage)
            raise
        try:  # visible now; the staging marks go in bounded transactions (a crash leaves them to the sweep)
            self._run_chunks("stage_cleanup", stage, self.stage_chunk)
        except Exception:
            pass
        return created, [r["id"] for r in new_nodes if r["kind"] != NodeKind.LITERAL.value]

    def _stage_chunk(self, run: Callable[..., Any], stage: str, rows: list[dict]) -> None:
        """One staging transaction (a method of its own so tests can fail it mid-stage)."""
        import time

        for i in range(0, len(rows), BATCH_ROWS):
            part = rows[i:i + BATCH_ROWS]
            got = run(cypher.load("stage_units"), stage=stage, now=time.time(), units=part)
            if not got or got[0]["created"] != len(part):  # the stage was discarded under us
                raise StoreError(f"ingest stage {stage} disappeared while it was being written "
                                 "(removed as abandoned?); nothing of this batch is visible: run the ingest again")

    def _run_chunks(self, name: str, stage: str, chunk: int) -> int:
        """Each statement of ``name``, one bounded transaction per chunk, until it reports 0."""
        done = 0
        for stmt in cypher.statements(name):
            while True:
                with self._session(write=True) as session:
                    n = session.execute_write(lambda tx: tx.run(stmt, stage=stage, limit=chunk).single()["removed"])
                done += n
                if n == 0:
                    break
        return done

    def discard_stage(self, stage: str, chunk: int = 10_000) -> int:
        """Delete an unpublished stage's invisible data in bounded transactions."""
        return self._run_chunks("stage_discard", stage, chunk)

    def _discard_stage_quietly(self, stage: str) -> None:
        try:
            self.discard_stage(stage)
        except Exception:  # the server may be gone; the stage is invisible and goes once abandoned
            pass

    def discard_abandoned_stages(self, stale_seconds: float = STAGE_STALE_SECONDS) -> list[str]:
        """Remove the stages of writers that stopped (crashed) ``stale_seconds`` ago or more."""
        import time

        rows = self.read("stage_abandoned", now=time.time(), stale=float(stale_seconds))
        for r in rows:
            self._run_chunks("stage_cleanup" if r["published"] else "stage_discard", r["stage"], 10_000)
        return [r["stage"] for r in rows]

