"""The graph store interface both backends implement (embedded, Neo4j).

Each read method is one "procedure" of DESIGN §2 (docs/DESIGN.md): on Neo4j it is one parameterised
Cypher file, on the embedded store a dictionary walk. The expansion layer composes them,
so both backends answer every query through the same Python code and the contract tests
can compare them method by method.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

# re-exported under their old home (``X as X``: public for type checkers too)
from kgservice.errors import IngestConflict as IngestConflict
from kgservice.errors import ReadOnlyError as ReadOnlyError
from kgservice.errors import StoreDamaged as StoreDamaged
from kgservice.errors import StoreError as StoreError
from kgservice.errors import StoreWriteError as StoreWriteError
from kgservice.model import IngestReport, Node, Unit

if TYPE_CHECKING:
    from pathlib import Path

    from kgservice.apikeys.store import KeyStore
    from kgservice.jobs.queue import JobQueue
    from kgservice.lifecycle.model import DocumentParts
    from kgservice.stores.changelog import ChangeFeed, VersionClock
    from kgservice.stores.shared import CommunityMap, MergeDecision, SavedResult
    from kgservice.vectors.base import VectorStore

MAX_CLOSURE_DEPTH = 10  # literal bound: Cypher var-length bounds cannot be parameters


_CLOCKS = threading.Lock()  # creating a store's version clock (GraphStore.version_clock)


@dataclass
class IndexRows:
    """Everything a store derives from its units, read back as rows (``kg doctor`` compares
    them with what the units imply, :func:`kgservice.admin.doctor.expected_rows`).

    Lists, not sets: a row present twice is a duplicate. ``args`` / ``mods`` are None on a
    backend that keeps only the ``context`` reverse index."""

    nodes: list[tuple[str, str]]  # (node id, kind)
    subject: list[tuple[str, str]]  # (unit id, node id): subject_mentions
    context: list[tuple[str, str]]  # (unit id, node id): context_mentions (args and modifier values)
    relations: list[tuple[str, str, str, str, bool]]  # (src, dst, kind, unit id, live) node-to-node edges
    superseded_by: list[tuple[str, str]]  # (older unit id, newer unit id)
    args: list[tuple[str, int, str]] | None = None  # (unit id, position, node id)
    mods: list[tuple[str, str, str]] | None = None  # (unit id, slot, node id)


class DirectedReads(Protocol):
    """The procedures directed expansion reads (kgservice/expansion/directed.py)."""

    def node_superseded_end(self, node_id: str) -> list[str]: ...
    def synonym_class(self, node_id: str) -> list[str]: ...
    def subject_mentions(self, node_id: str) -> list[str]: ...
    def context_mentions(self, node_id: str) -> list[str]: ...
    def belongs_to_ancestors(self, node_id: str) -> dict[str, int]: ...
    def narrowed_by(self, node_id: str) -> list[str]: ...
    def narrows(self, node_id: str) -> list[str]: ...
    def superseded_end(self, unit_ids: Sequence[str]) -> dict[str, list[str]]: ...


@dataclass
class PrefetchedReads:
    """Answers of the directed-expansion procedures for a set of seeds, fetched in one go
    (Neo4j: ``directed_expand.cypher``, one round trip instead of ~14 per seed).

    Lookups are strict: asking for a node the prefetch did not cover is a KeyError, so a
    prefetch that walks less than expansion reads fails loudly instead of dropping facts.
    Values are stored as the procedures return them (sorted, node itself in its class)."""

    node_ends: dict[str, list[str]] = field(default_factory=dict)
    classes: dict[str, list[str]] = field(default_factory=dict)
    subject: dict[str, list[str]] = field(default_factory=dict)
    context: dict[str, list[str]] = field(default_factory=dict)
    ancestors: dict[str, dict[str, int]] = field(default_factory=dict)
    derived: dict[str, list[str]] = field(default_factory=dict)  # narrowed_by
    bases: dict[str, list[str]] = field(default_factory=dict)  # narrows
    unit_ends: dict[str, list[str]] = field(default_factory=dict)  # superseded units only

    def add_unknown_seed(self, seed: str) -> None:
        """A seed that is not a stored node: the procedures answer it with itself / nothing."""
        self.node_ends[seed] = [seed]
        self.classes[seed] = [seed]
        for table in (self.subject, self.context, self.derived, self.bases):
            table[seed] = []
        self.ancestors[seed] = {}

    def node_superseded_end(self, node_id: str) -> list[str]:
        return self.node_ends[node_id]

    def synonym_class(self, node_id: str) -> list[str]:
        return self.classes[node_id]

    def subject_mentions(self, node_id: str) -> list[str]:
        return self.subject[node_id]

    def context_mentions(self, node_id: str) -> list[str]:
        return self.context[node_id]

    def belongs_to_ancestors(self, node_id: str) -> dict[str, int]:
        return self.ancestors[node_id]

    def narrowed_by(self, node_id: str) -> list[str]:
        return self.derived[node_id]

    def narrows(self, node_id: str) -> list[str]:
        return self.bases[node_id]

    def superseded_end(self, unit_ids: Sequence[str]) -> dict[str, list[str]]:
        return {u: self.unit_ends.get(u, [u]) for u in unit_ids}


class GraphStore(ABC):
    """A backend is one provider: besides the graph it supplies the change log, the job queue
    and the API-key store of the knowledge base, so nothing outside ``kgservice/stores/``
    needs to know which backend it runs on."""

    backend: str = "abstract"
    #: the data is files this process holds itself (not a server shared between processes):
    #: a replacing restore or a salvage builds a new store beside it and swaps it in
    in_process: ClassVar[bool] = False

    # -- writes -------------------------------------------------------------
    @abstractmethod
    def ingest(self, units: Sequence[Unit], progress: Callable[[int], None] | None = None) -> IngestReport:
        """Store a batch atomically: all units, nodes, relations and reverse indexes, or none."""

    # -- units and nodes ----------------------------------------------------
    @abstractmethod
    def get_units(self, ids: Iterable[str]) -> list[Unit]: ...

    @abstractmethod
    def iter_units(self) -> Iterator[Unit]: ...

    @abstractmethod
    def get_nodes(self, ids: Iterable[str]) -> list[Node]: ...

    @abstractmethod
    def iter_nodes(self) -> Iterator[Node]: ...

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """units, nodes, relations, superseded_units, plus units per family kind (``kind:<k>``)."""

    # -- procedures (sorted results, so backends compare equal) ------------
    @abstractmethod
    def subject_mentions(self, node_id: str) -> list[str]:
        """Unit ids whose subject is the node."""

    @abstractmethod
    def context_mentions(self, node_id: str) -> list[str]:
        """Unit ids where the node is an argument or a modifier value."""

    @abstractmethod
    def mentions(self, node_id: str) -> list[str]:
        """Unit ids that mention the node at all (subject, argument or modifier value), each once:
        what retrieval, drill-down and the entry step's specificity read (one read, not two)."""

    def mentions_of(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        """:meth:`mentions` of several nodes in one read (a server store answers in one round
        trip: retrieval and drill-down ask for 30-40 nodes per question)."""
        return {n: self.mentions(n) for n in dict.fromkeys(node_ids)}

    def mention_counts(self, node_ids: Sequence[str]) -> dict[str, int]:
        """How many units mention each node (``len(mentions(n))``) without shipping the ids: the
        entry step's specificity needs only the number, and a hub's list is tens of thousands long."""
        return {n: len(units) for n, units in self.mentions_of(node_ids).items()}

    @abstractmethod
    def narrowed_by(self, node_id: str) -> list[str]:
        """Derived nodes that narrow this base node."""

    @abstractmethod
    def narrows(self, node_id: str) -> list[str]:
        """Base nodes a derived node narrows."""

    @abstractmethod
    def synonym_class(self, node_id: str) -> list[str]:
        """The ≡ class of the node (itself included), over synonym units that are not superseded."""

    @abstractmethod
    def belongs_to_parents(self, node_ids: Sequence[str]) -> list[str]:
        """Direct belongs-to targets of any of the nodes (one hop, not superseded)."""

    @abstractmethod
    def belongs_to_ancestors(self, node_id: str) -> dict[str, int]:
        """Transitive belongs-to ancestors -> shortest depth (1..MAX_CLOSURE_DEPTH)."""

    @abstractmethod
    def sunk_units(self, node_id: str) -> list[tuple[str, str]]:
        """(unit id, ancestor) for every unit whose subject is a belongs-to ancestor: facts that sink."""

    @abstractmethod
    def superseded_end(self, unit_ids: Sequence[str]) -> dict[str, list[str]]:
        """Each unit id -> the terminal (not superseded) units of its supersession chain."""

    @abstractmethod
    def node_superseded_end(self, node_id: str) -> list[str]:
        """Terminal nodes of a node-level supersession chain (X replaced by Y replaced by Z -> [Z])."""

    @abstractmethod
    def spread_step(self, frontier: Mapping[str, float], tau: Mapping[str, float],
                    max_fanout: int | None = None, degree_damping: float = 0.0) -> dict[str, float]:
        """One hop of spreading activation: energy each neighbour receives from the frontier.

        A frontier node passes ``energy * tau[kind]`` once per distinct (neighbour, kind).
        Content edges are followed forward only (cause -> effect); synonym, belongs_to, of
        and related_to both ways. Edges of superseded units and edges touching literal
        nodes are not walked; kinds missing from ``tau`` pass nothing. With ``max_fanout``,
        a frontier node with more relation edges than that (:func:`spread_degree`) passes
        nothing: the fan-out constraint of spreading activation. With ``degree_damping`` δ > 0,
        each row carries ``energy * tau[kind] / max(1, d) ** δ`` where d is the number of
        (neighbour, kind) rows the node passes energy along in this hop (docs/spreading.md)."""

    @abstractmethod
    def causal_step(self, node_ids: Sequence[str], family: str) -> list[tuple[str, str, str]]:
        """(src, dst, unit id) for every live content edge of ``family`` leaving the nodes
        (cause -> effect), sorted: one hop of a causal chain. A literal target (``lit:…``) is
        included: an effect the text states as a value ends a chain there."""

    def spread_resident(self, seeds: Mapping[str, float], params: Any,
                        limit: int | None = None) -> tuple[dict[str, float], int, int] | None:
        """The whole spreading activation run by the store itself, or None to let
        kgservice.expansion.spread_activation step hop by hop. ``seeds`` carry their start
        energy (E0 applied); ``params`` is a SpreadParams. Returns (energy per node, hops,
        nodes activated), equal to what the hop loop computes; with ``limit``, the energies of
        at least the ``limit`` most energetic nodes (ties by id). A server backend answers in
        one round trip."""
        return None

    def directed_reads(self, seeds: Sequence[str]) -> DirectedReads:
        """What directed expansion reads from. An in-process store answers each procedure
        cheaply, so it is its own reader; a server-backed store prefetches in one round trip."""
        return self

    # -- the lifecycle (kgservice.lifecycle): documents, retractions, changes -----------------
    @abstractmethod
    def apply_change(self, add: Sequence[Unit], retract: Sequence[str], docs: Mapping[str, Any],
                     change: Any, progress: Callable[[int], None] | None = None,
                     purge_units: Sequence[str] = (), purge_texts: Mapping[str, list[str]] | None = None,
                     ) -> tuple[IngestReport, list[str]]:
        """One lifecycle change, atomically: the ``retract`` unit ids leave every index (kept in
        the archive with the change), ``add`` is ingested (not merged into a unit retracted by
        the same change), ``docs`` (id -> DocumentRecord, or None) are set, ``purge_units`` leave
        the archive, ``purge_texts`` ({change id: doc ids}) drop texts from the history, and
        the change (a ChangeRecord: ``seq``, ``added``, ``retracted`` filled in here) is
        appended; the touched nodes go to the change log in the same write. Returns (the
        batch's IngestReport, node ids no live unit mentions any more, now removed)."""

    @abstractmethod
    def documents(self, ids: Iterable[str] | None = None, *, parts: DocumentParts = "whole") -> list[Any]:
        """Document records (DocumentRecord, with statements), by id; None: all, sorted.

        ``parts`` says which bulky fields to read: ``"whole"`` both the compressed text and the
        original converted file, ``"text"`` the text only (``original_z`` left None), ``"meta"``
        neither (``text_z`` None too; ``text_stored`` / ``original_stored`` still say what is
        kept). A listing or an answer's source lines needs no original file (a PDF of up to
        KG_DOC_TEXT_MAX_BYTES, over the wire on Neo4j) and, when its rows are cached, no text."""

    @abstractmethod
    def stated_by(self, unit_ids: Iterable[str]) -> dict[str, list[str]]:
        """unit id -> the documents stating it, for the units some document states."""

    @abstractmethod
    def retracted_units(self, ids: Iterable[str] | None = None) -> dict[str, Any]:
        """Archived units (RetractedUnit) by id; None: all of them."""

    @abstractmethod
    def changes(self) -> list[Any]:
        """Every lifecycle change (ChangeRecord), oldest first."""

    @abstractmethod
    def restore_lifecycle(self, documents: Sequence[Any], retracted: Sequence[Any], changes: Sequence[Any]) -> None:
        """``kg restore``: documents, archived units and changes from a dump, in one write."""

    # -- change-log version (kgservice.stores.changelog, kgservice.stores.versioned) -----
    def version_clock(self) -> VersionClock | None:
        """This store's change-log version, read single-flight; None for a store that keeps no
        log. One clock per store object, so every reader inside one request (the caches, the
        label index, the BM25 index) shares one read (:func:`kgservice.stores.changelog.request_scope`)."""
        with _CLOCKS:
            if "_version_clock" not in self.__dict__:
                from kgservice.stores.changelog import VersionClock

                feed = self.change_feed()
                self.__dict__["_version_clock"] = VersionClock(feed) if feed is not None else None
            clock: VersionClock | None = self.__dict__["_version_clock"]
            return clock

    def local_generation(self) -> Hashable:
        """What moves when the data this process holds in memory changes, for a store that
        serves reads from memory (embedded); None when every read goes to the server (Neo4j).
        Why: the embedded store logs a change before the batch reaches memory, so the version
        alone can run ahead of the data (:mod:`kgservice.stores.versioned`)."""
        return None

    # -- what the backend provides besides the graph -----------------------------------
    @abstractmethod
    def change_feed(self) -> ChangeFeed | None:
        """This store's change log (read by the caches and every :class:`VersionClock`), or
        None for a store that keeps none (caches then compare the unit count)."""

    @abstractmethod
    def log_change(self, touched: Iterable[str], *, everything: bool = False) -> int | None:
        """Log a change made outside an ingest (``touched`` node ids, or ``everything``) in
        the store's change log; returns the new version (None without a log). Callers go
        through :func:`kgservice.stores.changelog.record_change`, which attributes it."""

    @abstractmethod
    def job_queue(self, data_dir: Path, *, validate: Callable[[str, Any], Any] | None = None,
                  max_attempts: int, read_only: bool) -> JobQueue:
        """The durable ingest-job queue kept with this store (``data_dir``: the knowledge
        base's own directory, for a backend that keeps the queue in a local file)."""

    @abstractmethod
    def key_store(self, data_dir: Path, *, clock: VersionClock | None, bump: Callable[[], Any] | None,
                  read_only: bool) -> KeyStore:
        """Where this knowledge base's API keys live, so every server sharing the store agrees;
        ``clock``/``bump``: the change-log version that drops verified keys from memory."""

    def graph_vectors(self, *, dim: int, model_name: str, collection: str, recreate: bool = False,
                      candidates: int | None = None) -> VectorStore | None:
        """A vector store kept inside this graph database (a ``VectorStore``), for a backend
        that has one: every process of a deployment then searches the same vectors with
        nothing else to run. None when the backend keeps no vectors itself."""
        return None

    def session_table(self) -> Any:
        """Where web sign-ins are kept so every server of this store knows them
        (:class:`kgservice.stores.sessions.SessionTable`), or None: the web page then keeps
        them in its own process (a read-only server does too: it cannot write them)."""
        return None

    def schema_record(self) -> Any:
        """This store's schema version record (:class:`kgservice.stores.schema.SchemaRecord`),
        checked whenever the store is opened; None for a backend without one."""
        return None

    def server_registry(self) -> Any:
        """Heartbeats of the servers sharing this store (:mod:`kgservice.server.peers` shares
        the rate limits out among them), or None: a store one server owns has one server."""
        return None

    def mirror_artefact(self) -> Any:
        """Where the graphify mirror is kept for every server of this store
        (:class:`kgservice.export.shared_mirror.MirrorArtefact`), or None: a store one server
        owns (or a read-only one) builds its mirror itself."""
        return None

    # -- state every server of this store shares (kgservice.stores.shared) -------------
    @abstractmethod
    def save_result(self, record: SavedResult) -> None:
        """Keep one saved result (a SavedResult; its ``name`` is unique). It survives a
        replacing restore, like keys and jobs: it is the team's feedback, not the knowledge."""

    @abstractmethod
    def saved_results(self) -> list[SavedResult]:
        """Every saved result, oldest first (date, then name)."""

    @abstractmethod
    def community_map(self) -> CommunityMap | None:
        """The graphify communities stored for a graph (a CommunityMap), or None."""

    @abstractmethod
    def set_community_map(self, record: CommunityMap) -> None:
        """Store the communities of a graph, replacing those of any other graph."""

    @abstractmethod
    def merge_decision(self, a: str, b: str) -> MergeDecision | None:
        """The entity-resolution decision stored for the pair (``a`` <= ``b``), or None."""

    @abstractmethod
    def record_merge_decision(self, decision: MergeDecision) -> None:
        """Keep one entity-resolution decision (replacing one of the same pair). Like saved
        results it survives a replacing restore's wipe: it judges two names, not the graph."""

    @abstractmethod
    def merge_decisions(self) -> list[MergeDecision]:
        """Every stored entity-resolution decision, by pair (``kg dump``)."""

    # -- administration (kg doctor / dump / restore) -------------------------------
    @abstractmethod
    def index_rows(self) -> IndexRows:
        """Read back every derived row (nodes, reverse indexes, relation edges, supersessions)."""

    @abstractmethod
    def rebuild_indexes(self, unit_ids: Sequence[str] | None = None) -> dict[str, int]:
        """Re-derive nodes, reverse indexes, relation edges and supersession links of these
        units (None: all) from the stored units, in one atomic write. Ids that are not stored
        units only lose their derived rows; node labels are kept, node kinds recomputed,
        nodes no unit mentions removed. A backend may rebuild more than asked."""

    @abstractmethod
    def relabel_nodes(self, labels: Mapping[str, str]) -> int:
        """Set the display label of existing nodes (ids unchanged); returns how many changed."""

    @abstractmethod
    def aliases(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        """{merged-away duplicate id: the unit it was merged into} for those of ``ids`` that
        are such aliases (None: all of them, for ``kg dump``). Ingest records them with the
        batch that merged them, so later batches can still name the duplicate's id."""

    def aliases_in_force(self, ids: Iterable[str]) -> dict[str, str]:
        """:meth:`aliases` of ``ids`` whose unit is live: an alias follows the unit it names, so
        while that unit is retracted (in the archive) the alias is archived with it and a batch
        may neither resolve it nor be refused by it; an undo that brings the unit back brings it
        back. What validation asks (the ids it would otherwise treat as new)."""
        found = self.aliases(ids)
        live = {u.id for u in self.get_units(sorted(set(found.values())))} if found else set()
        return {d: k for d, k in found.items() if k in live}

    @abstractmethod
    def add_aliases(self, aliases: Mapping[str, str]) -> int:
        """Record duplicate aliases in one atomic write (``kg restore`` of a dump's aliases);
        returns how many were new."""

    @abstractmethod
    def remove_aliases(self, ids: Iterable[str]) -> int:
        """Delete the duplicate aliases with these ids in one atomic write (``kg doctor --repair``:
        an alias whose id is also a stored unit's); returns how many were deleted."""

    def interrupted_restore(self) -> dict[str, Any] | None:
        """The record of a ``kg restore --replace`` that started wiping this store and has not
        finished (path, sha256, units, started_at), or None. A store that builds the new
        content beside the old one and swaps it in (embedded) never has one."""
        return None

    def mark_restore(self, info: dict[str, Any] | None) -> None:
        """Record (``info``) or forget (None) a replace restore under way; see
        :meth:`interrupted_restore`. A no-op for a store that swaps."""

    @abstractmethod
    def wipe(self) -> None:
        """Delete everything (kg restore --replace, after the dump was verified)."""

    def close(self) -> None:  # pragma: no cover - trivial
        pass

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: tests only: ``<point>:<marker file>`` makes a lifecycle change that reaches ``point``
#: (``before-commit`` or ``after-commit``) write the marker file and wait there, so a test can
#: kill the process at a known moment of the change (tests/lifecycle/test_kill.py)
PAUSE_ENV = "KG_TEST_LIFECYCLE_PAUSE"


def pause_point(point: str) -> None:
    """Wait at ``point`` of a lifecycle change when :data:`PAUSE_ENV` names it (tests only)."""
    import os

    spec = os.environ.get(PAUSE_ENV)
    if not spec or not spec.startswith(point + ":"):
        return
    import time
    from pathlib import Path

    Path(spec[len(point) + 1:]).write_text(str(os.getpid()))
    while True:
        time.sleep(1)


def check_current(change: Any, current: Mapping[str, tuple[int, str] | None]) -> None:
    """Refuse a replacement or forget prepared against another version of a document than the
    stored one (``current``: id -> (version, sha256), None when absent): two concurrent
    replacements of one document are serialised by the store, and the second one, prepared
    from the same old version as the first, would otherwise mix with it. An undo sets the
    documents as they were before the change it undoes, whatever they are now."""
    if change.kind not in ("ingest", "replace", "forget"):
        return
    stale = []
    for doc_id, before in change.docs_before.items():
        now = current.get(doc_id)
        if (now is None) != (before is None) or (now is not None and now != (before.version, before.sha256)):
            stale.append(f"{doc_id!r} (version {now[0] if now else 'none'} now, the change was prepared "
                         f"against {before.version if before is not None else 'none'})")
    if stale:
        raise IngestConflict(f"document {', '.join(stale)} changed while this {change.kind} was prepared; "
                             "nothing was changed: run it again")
