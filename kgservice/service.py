"""The knowledge base as one object: the library's front door (docs/DESIGN.md §9).

Settings -> store, lexicon, embedder, vectors, caches, LLM; and one method per thing a user
does (ingest, ask, expand, search, export, stats, doctor, dump, restore, caches). Each ``kg``
command is a parse of its flags, one call here and a print; the HTTP/MCP server calls the
same methods. The methods are a router: each delegates to the module that does the work, so
this file stays small. Switching from the embedded default to Neo4j + a Qdrant server is
configuration only. Heavy parts (embedding model, Qdrant client, litellm) open lazily:
``kg stats`` does not load a model.

>>> import tempfile
>>> from kgservice.config import Settings
>>> # the fact on the class (mammal has fur) sinks to the instance: cat's expansion holds both units
>>> with KnowledgeBase(Settings(data_dir=Path(tempfile.mkdtemp()), embedder="hash:64")) as kb:
...     report = kb.ingest_notation("{cat} [is a] {mammal}\\n{mammal} [has] {fur}")
...     result = kb.expand("cat")
...     print(report.units_added, kb.stats()["units"], sorted(result.nodes), len(result.units))
2 2 ['cat', 'mammal'] 2
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ContextManager, Literal, ParamSpec, TypeVar

from kgservice.config import Settings, init_data_dir, load_settings
from kgservice.errors import InputError, InvalidArgument, ReadOnlyError, StoreError  # noqa: F401 (ReadOnlyError re-exported)
from kgservice.expansion.causal import CausalResult
from kgservice.expansion.directed import DirectedResult
from kgservice.expansion.spread import SpreadParams, SpreadResult
from kgservice.families import Lexicon
from kgservice.ids import node_id
from kgservice.lifecycle.model import (ChangeRecord, ChangeResult, DocumentInfo, DocumentRecord, Original,
                                       Provenance, PurgeReport, SyncReport)
from kgservice.model import IngestReport, Unit
from kgservice.parts import Parts
from kgservice.stores.base import GraphStore
from kgservice.stores.factory import missing_store

if TYPE_CHECKING:
    from kgservice.convert.source import Source
    from kgservice.entry import EntryFinder, EntryResult
    from kgservice.expansion.lexical import LexicalUnits
    from kgservice.expansion.retrieve import Retrieval
    from kgservice.admin.doctor import DoctorReport
    from kgservice.apikeys.store import KeyStore
    from kgservice.caches import Caches
    from kgservice.jobs.queue import JobQueue
    from kgservice.llm import LLM
    from kgservice.llm.health import ModelHealth
    from kgservice.pipeline.ingest import Progress, TextIngestReport
    from kgservice.pipeline.asking import AskParams, AskResult
    from kgservice.stores.shared import SavedResult
    from kgservice.vectors import Embedder, VectorStore
    from kgservice.vectors.upkeep import NodeVectors

log = logging.getLogger(__name__)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _makes_workspace(method: Callable[Concatenate[KnowledgeBase, _P], _R]) -> Callable[Concatenate[KnowledgeBase, _P], _R]:
    """A write that makes the knowledge base's workspace when nobody made it yet, as ``kg
    --workspace NEW init / ingest / sync / restore`` do; every other method refuses a named
    workspace that does not exist (:meth:`kgservice.parts.Parts.store`)."""

    def making(kb: KnowledgeBase, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with kb.parts.making_workspace():
            return method(kb, *args, **kwargs)

    functools.update_wrapper(making, method)  # its return value's type would hide the signature
    return making


class NodeNotFound(InputError, LookupError):
    """The node to expand from is not in the graph (the message names the nearest by vector)."""


@dataclass
class EntryHit:
    node_id: str
    label: str
    score: float


@dataclass
class SpreadExpansion:
    """Spreading activation from the seeds, with the parameters it ran with."""

    seeds: list[str]
    params: SpreadParams
    result: SpreadResult
    limit: int | None = None

    @property
    def seed(self) -> str:
        return self.seeds[0]

    def ranked(self) -> list[tuple[str, float]]:
        return self.result.ranked(self.limit)

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "seeds": self.seeds, "hops": self.result.hops, "params": self.params.to_dict(),
                "ranked": self.result.to_dict(self.limit)["ranked"]}


@dataclass
class CausalExpansion:
    """The causal chains (the 导致 family, cause → effect) from each seed, every hop with the
    unit stating it, so a reader can cite the whole chain down to its end."""

    seeds: list[str]
    max_hops: int
    results: list[CausalResult]

    @property
    def units(self) -> list[str]:
        return sorted({u for r in self.results for u in r.units})

    def to_dict(self) -> dict[str, Any]:
        return {"mode": "causal", "seeds": self.seeds, "max_hops": self.max_hops, "units": self.units,
                "results": [r.to_dict() for r in self.results]}


@dataclass
class DirectedExpansion(DirectedResult):
    """Directed expansion with its live units read once, so a cached expansion is rendered
    (CLI, REST, MCP) without another store read."""

    live_units: list[Unit] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return DirectedResult.to_dict(self)


ExpandMode = Literal["directed", "spread", "causal"]
Expansion = DirectedExpansion | SpreadExpansion | CausalExpansion


@dataclass
class UnitRecord:
    """A unit and the ids of the units that supersede it (``KnowledgeBase.unit``)."""
    unit: Unit
    superseded_by: list[str]


@dataclass
class Neighbour:
    """A node one unit away (``KnowledgeBase.neighbors``): ``direction`` is ``out`` when the
    asked node is the unit's subject, ``in`` when it is an argument or modifier value."""
    node: str
    label: str
    direction: str
    unit: Unit


@dataclass
class ExportReport:
    path: Path
    counts: dict[str, int]  # nodes, links, units written
    memory_dir: Path | None = None  # where saved results were read from, if any were fed back
    memory: IngestReport | None = None


class KnowledgeBase:
    """One knowledge base; use it as a context manager (or call :meth:`close`)."""

    def __init__(self, settings: Settings | None = None):
        self.parts = Parts(settings if settings is not None else load_settings(), validate_job=self._validate_job)
        self._open_lock = threading.RLock()  # guards the count of asks waiting for a warm-up
        self._warm = threading.Event()  # set: no warm-up running (asks go ahead)
        self._warm.set()
        self._warm_waiters = 0  # asks waiting for a warm-up now (read by tests)

    @property
    def settings(self) -> Settings:
        """The settings the parts were (and will be) opened with."""
        return self.parts.settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        self.parts.settings = value

    def _validate_job(self, kind: str, payload: Any) -> Any:
        from kgservice.jobs.run import validate_payload

        return validate_payload(self.parts, kind, payload)

    @staticmethod
    def missing(settings: Settings) -> str | None:
        """Why a read with these settings would find no store (None: it would find one), asked
        before opening: opening an embedded store creates it."""
        return missing_store(settings)

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the parts (kgservice.parts), opened on first use ------------------------------
    @property
    def lexicon(self) -> Lexicon:
        return self.parts.lexicon

    @property
    def store(self) -> GraphStore:
        return self.parts.store

    @property
    def embedder(self) -> Embedder:
        return self.parts.embedder

    @property
    def vectors(self) -> VectorStore:
        return self.parts.vectors

    @property
    def caches(self) -> Caches:
        return self.parts.caches

    @property
    def llm(self) -> LLM:
        """The configured model, one per knowledge base, so its usage counts accumulate."""
        return self.parts.llm

    def new_llm(self) -> LLM:
        """A client of the configured model with usage counts of its own (:meth:`Parts.new_llm`)."""
        return self.parts.new_llm()

    @property
    def model_health(self) -> ModelHealth:
        return self.parts.model_health

    def open_vectors(self, recreate: bool = False) -> VectorStore:
        """A new handle on the configured vector store (:meth:`Parts.open_vectors`)."""
        return self.parts.open_vectors(recreate)

    def vectors_if_open(self) -> VectorStore | None:
        """The vector store if it is already open, else None (never opens it)."""
        return self.parts.vectors_if_open()

    def reopen_vectors(self, recreate: bool = False) -> VectorStore:
        """Close and open the vector store again (:meth:`Parts.reopen_vectors`)."""
        return self.parts.reopen_vectors(recreate)

    @property
    def node_vectors(self) -> NodeVectors:
        """Vector upkeep (:mod:`kgservice.vectors.upkeep`): the vector side of every graph write."""
        return self.parts.node_vectors

    def vector_writer(self) -> ContextManager[VectorStore]:
        """The vector store for one write (:meth:`NodeVectors.writer`)."""
        return self.node_vectors.writer()

    def restore_lost_vectors(self, vs: VectorStore | None = None, batch: int = 256, *, owed: bool = False) -> int:
        """Embed what a writer that stopped part-way lost or owed (:meth:`NodeVectors.restore_lost`)."""
        return self.node_vectors.restore_lost(vs, batch, owed=owed)

    def owing_vectors(self) -> ContextManager[None]:
        """Around a write whose vectors follow its graph write (:meth:`NodeVectors.owing`)."""
        return self.node_vectors.owing()

    def settle_owed_vectors(self) -> int:
        """Embed the vectors stopped writers owed (:meth:`NodeVectors.settle_owed`)."""
        return self.node_vectors.settle_owed()

    @property
    def jobs(self) -> JobQueue:
        """The durable ingest-job queue (:mod:`kgservice.jobs`); a units payload is parsed at
        submit time, so bad notation is refused before it is queued."""
        return self.parts.jobs

    def key_store(self) -> KeyStore:
        """The API keys, kept by the store's backend, so every server sharing the store agrees.
        It shares the caches' version clock (one version read per request serves both) when
        the store keeps a change log, and a key change moves that version.

        Keys belong to the deployment, not to a workspace: they live with the ``default``
        workspace (its directory, or the unscoped key nodes of Neo4j), so every workspace's
        knowledge base opens the same keys. Only ``default``'s shares its version clock (a named
        workspace's clock does not move when a key changes); keys made inside a named workspace by
        an earlier release are carried into them on open (:meth:`KeyStore.carry_over`)."""
        from kgservice.config import DEFAULT_WORKSPACE
        from kgservice.stores.changelog import bump_version

        own = self.settings.workspace == DEFAULT_WORKSPACE
        clock = self.caches.clock if own else None
        bump = (lambda: bump_version(self.store)) if clock is not None else None
        keys = self.store.key_store(self.settings.data_dir, clock=clock, bump=bump,
                                    read_only=self.settings.read_only)
        keys.carry_over(self.settings.data_dir)
        return keys

    def forget_opened(self) -> None:
        """Close and drop what was opened on the store's files (:meth:`Parts.forget_opened`)."""
        self.parts.forget_opened()

    def spread_params(self, **over: float | int) -> SpreadParams:
        """Spreading parameters: τ from the lexicon, the rest from settings; a falsy override keeps
        the setting (:func:`kgservice.expansion.spread.service_params`)."""
        from kgservice.expansion.spread import service_params

        return service_params(self.settings, self.lexicon, **over)

    @_makes_workspace
    def init(self) -> Path:
        """Create the data directory and a commented config template; returns the template path.
        In a shared store (Neo4j) a named workspace is marked there too, so it exists for reads
        as the embedded store's new directory does (:func:`kgservice.workspaces.mark`)."""
        from kgservice.workspaces import mark

        path = init_data_dir(self.settings)
        mark(self.settings, lambda: self.store)
        return path

    # -- writes ------------------------------------------------------------------
    @_makes_workspace
    def ingest_units(self, units: Sequence[Unit], embed: bool = True,
                     progress: Callable[[int], None] | None = None,
                     on_vectors: Callable[[int], None] | None = None) -> IngestReport:
        """Units in one atomic batch, then the vectors of the nodes it added
        (:func:`kgservice.pipeline.ingest.ingest_units`)."""
        from kgservice.pipeline.ingest import ingest_units

        return ingest_units(self.parts, units, embed=embed, progress=progress, on_vectors=on_vectors)

    def ingest_notation(self, text: str, *, doc: str = "<text>", embed: bool = True) -> IngestReport:
        """Units written in the notation (no LLM), e.g. ``"{cat} [is a] {mammal}"``."""
        from kgservice.notation import parse_units

        return self.ingest_units(parse_units(text, self.lexicon, doc=doc), embed=embed)

    def parse_unit_files(self, files: Sequence[Path]) -> list[Unit]:
        """Every unit of every file, or one NotationErrors listing all bad lines of all files."""
        from kgservice.pipeline.ingest import parse_unit_files

        return parse_unit_files(files, self.lexicon)

    @_makes_workspace
    def ingest_unit_files(self, files: Sequence[Path], embed: bool = True,
                          progress: Callable[[int], None] | None = None) -> IngestReport:
        """Unit files (``.units``): all parsed before anything is stored, one batch."""
        return self.ingest_units(self.parse_unit_files(files), embed=embed, progress=progress)

    @_makes_workspace
    def ingest_text(self, paths: Path | str | Sequence[Path | str], mode: str | None = None, *,
                    embed: bool = True, force: bool = False, progress: Progress | None = None) -> TextIngestReport:
        """Text / Markdown files through LLM extraction; idempotent per document content."""
        from kgservice.pipeline.ingest import ingest_text

        return ingest_text(self.parts, paths, mode, progress=progress, embed=embed, force=force)

    # -- the lifecycle (kgservice.lifecycle): documents, replace, forget, retract, undo ---------
    @_makes_workspace
    def ingest_paths(self, paths: Sequence[Path | str], mode: str | None = None, *, doc_id: str | None = None,
                     embed: bool = True, force: bool = False, progress: Progress | None = None,
                     ) -> tuple[IngestReport | None, TextIngestReport | None]:
        """What ``kg ingest`` does: every file the paths name (folders searched recursively) is
        the current version of a document, its id the path relative to the folder given (a
        file given alone: its name; ``doc_id`` for a single file; :mod:`kgservice.lifecycle.files`):
        a new one is ingested, a changed one replaces its units, an unchanged one changes
        nothing (``force``: ingested again). Unit files first (all parsed before anything is
        stored), then text files through the LLM. Returns (unit-file report, text report), None
        for a kind absent.

        ``progress(event, info)`` gets, for unit files, ``units-start`` (``files``, ``units``:
        after every file parsed, before anything is stored), ``units`` (``added``: units
        written by one file), ``units-vectors`` (``nodes``: every file's graph write is in, now
        the vectors of that many new nodes are written) and ``units-done`` (``files``, ``report``, ``nodes_embedded``); then the
        text events of :meth:`ingest_text` (``start``, ``chunk``, ``document``)."""
        from kgservice.lifecycle.files import ingest_documents

        return ingest_documents(self.parts, paths, mode, doc_id=doc_id, embed=embed, force=force, progress=progress)

    @_makes_workspace
    def ingest_document(self, doc_id: str, text: str, *, mode: str | None = None, title: str | None = None,
                        root: str | None = None, expect_version: int | None = None, embed: bool = True,
                        force: bool = False, source: Source | None = None) -> ChangeResult:
        """``text`` as the current version of document ``doc_id``: ingested, replacing the old
        version's units, or nothing when unchanged (:func:`kgservice.lifecycle.text.ingest_document`)."""
        from kgservice.lifecycle.text import ingest_document

        return ingest_document(self.parts, doc_id, text, mode=mode, title=title, root=root,
                               expect_version=expect_version, embed=embed, force=force, source=source)

    @staticmethod
    def document_mode(doc_id: str, mode: str | None = None) -> str:
        """The mode a document is ingested in (:func:`kgservice.pipeline.ingest.document_mode`)."""
        from kgservice.pipeline.ingest import document_mode

        return document_mode(doc_id, mode)

    @_makes_workspace
    def ingest_file(self, path: Path | str, *, base: Path | str | None = None, doc_id: str | None = None,
                    mode: str | None = None) -> ChangeResult:
        """A file as a document whose id is its path relative to ``base`` (the folder given to
        ingest / sync; default: the current directory), or ``doc_id``."""
        from kgservice.convert.source import read_source
        from kgservice.lifecycle.sync import doc_id_for

        p = Path(path)
        src = read_source(p)
        return self.ingest_document(doc_id or doc_id_for(p, base), src.text, mode=mode, source=src,
                                    root=str(Path(base).resolve()) if base is not None else None)

    @_makes_workspace
    def sync(self, folder: Path | str, *, delete: bool = True, mode: str | None = None,
             progress: Callable[[str, str], None] | None = None) -> SyncReport:
        """Make the documents ingested from ``folder`` mirror it: new files ingested, changed
        ones replaced, files gone forgotten (``delete=False`` keeps them)."""
        from kgservice.lifecycle.sync import sync

        return sync(self.parts, Path(folder), delete=delete, mode=mode, progress=progress)

    def documents(self) -> list[DocumentInfo]:
        """Every document (no text), by id: the records read without their texts and original
        files (``parts="meta"``), which a listing never shows."""
        return [d.info() for d in self.store.documents(parts="meta")]

    def document(self, doc_id: str) -> DocumentRecord:
        """One document with its text and statements; an unknown id is an InputError naming it."""
        from kgservice.lifecycle.ops import get_documents

        return get_documents(self.store, [doc_id])[0]

    def original(self, doc_id: str) -> Original:
        """The file a converted document (PDF, DOCX, ...) was ingested from, as given: its
        bytes, media type and file name; an InputError when the document is unknown, was not
        converted, or its file was over ``doc_text_max_bytes`` (not kept)."""
        from kgservice.convert import BY_NAME
        from kgservice.lifecycle.model import Original
        from kgservice.lifecycle.ops import get_documents

        rec = get_documents(self.store, [doc_id])[0]
        data = rec.original()
        if data is None:
            why = ("it was not converted from a file (its text is its source: `kg docs show`)" if rec.format is None
                   else "its file was larger than KG_DOC_TEXT_MAX_BYTES when it was ingested, so it was not kept")
            raise InputError(f"document {doc_id!r} has no original file kept: {why}")
        return Original(doc=rec.id, name=rec.id.rsplit("/", 1)[-1], media_type=BY_NAME[rec.format or ""].media_type,
                        data=data)

    def forget(self, doc_ids: Sequence[str]) -> ChangeResult:
        """Remove documents; their units leave every read path unless another document states them."""
        from kgservice.lifecycle.ops import forget_documents

        return forget_documents(self.parts, doc_ids)

    def retract(self, unit_ids: Sequence[str], reason: str, *, user: str | None = None) -> ChangeResult:
        """Take units out of the graph (kept, with the reason, until purged). ``user``: who the
        history credits; the server passes its caller's, since its own process user (what the
        history falls back to, as for the CLI) is not who asked."""
        from kgservice.lifecycle.ops import retract
        from kgservice.stores.changelog import attributed

        with attributed(user) if user else nullcontext():
            return retract(self.parts, unit_ids, reason)

    def undo(self, change_id: str, *, user: str | None = None) -> ChangeResult:
        """Undo any lifecycle change (an undo included) as a new change. ``user``: who the
        history credits (as for :meth:`retract`; none: the process user)."""
        from kgservice.lifecycle.ops import undo
        from kgservice.stores.changelog import attributed

        with attributed(user) if user else nullcontext():
            return undo(self.parts, change_id)

    def history(self, target: str | None = None) -> list[ChangeRecord]:
        """Lifecycle changes, oldest first; ``target``: a document or unit id."""
        from kgservice.lifecycle.ops import history

        return history(self.parts, target)

    def purge(self, retracted_before: str, *, yes: bool = False) -> PurgeReport:
        """Hard delete of units retracted (and document texts forgotten) before a date."""
        from kgservice.lifecycle.ops import purge

        return purge(self.parts, retracted_before, yes=yes)

    def provenance(self, unit_id: str) -> list[Provenance]:
        """The documents stating a unit, with line ranges and the source lines."""
        from kgservice.lifecycle.ops import provenance

        return provenance(self.parts, unit_id)

    def warm_up(self) -> None:
        """Load now what the first question would otherwise load on a user's clock: the asking
        pipeline, the model client's own tables (litellm and its tokenizer for a real model; the
        offline stand-in's tokenizer; nothing when no model is configured), the embedder's
        model, the vector index, the label index and the lemmatiser's dictionary. Makes no
        model call. Questions asked meanwhile wait for it (:meth:`ask`) instead of loading the
        same parts beside it. A server runs it in the background (:meth:`start_warm_up`);
        anything that fails here fails again, and is reported, on the request that needs it,
        so a failure is only logged."""
        self._warm.clear()
        try:
            import kgservice.pipeline.asking  # noqa: F401
            from kgservice.llm.check import calls_no_model
            from kgservice.llm.client import ensure_litellm, is_offline_model

            model = self.settings.llm_model
            if is_offline_model(model):
                if not calls_no_model(self.settings):
                    from kgservice.llm.offline import tokenizer

                    tokenizer()
            elif model:
                ensure_litellm().token_counter(model=model, text="warm up")
            self.embedder.embed(["warm up"])
            _ = self.vectors
            self.entry_finder.index()
            from kgservice.entry.spelling import dictionary_word

            dictionary_word("warm")  # the lemmatiser's table (0.3 s to load): the entry step's misspellings ask it
        except Exception as exc:  # noqa: BLE001 - best effort: the real request reports it properly
            log.info("warm-up stopped early: %s: %s", type(exc).__name__, exc)
        finally:
            self._warm.set()

    def start_warm_up(self) -> threading.Thread:
        """:meth:`warm_up` in a background thread; questions asked from now on wait for it."""
        self._warm.clear()  # before the thread runs: a question asked right after start waits too
        t = threading.Thread(target=self.warm_up, name="kg-warm-up", daemon=True)
        t.start()
        return t

    def _after_warm_up(self) -> None:
        if self._warm.is_set():
            return
        with self._open_lock:
            self._warm_waiters += 1
        try:
            self._warm.wait()
        finally:
            with self._open_lock:
                self._warm_waiters -= 1

    # -- reads -------------------------------------------------------------------
    def ask(self, question: str, params: AskParams | None = None, *, trace: bool = False, llm: LLM | None = None,
            on_round: Callable[[dict[str, Any]], None] | None = None,
            on_stream: Callable[[str, dict[str, Any]], None] | None = None) -> AskResult:
        """Answer from the graph, citing unit ids, or say it is not in the graph (DESIGN §4).

        ``llm`` replaces the knowledge base's client for this call (a server gives each request
        its own, so its usage counts that request only); ``on_round`` gets each drill-down
        round's record as soon as it is final; ``on_stream(event, data)`` gets the answer's text
        and citations while the model writes them, and the check's verdict
        (:mod:`kgservice.answer.streaming`). The result is the checked answer either way."""
        from kgservice.pipeline.asking import ask

        self._after_warm_up()
        return ask(self.parts, question, trace=trace, params=params, llm=llm or self.llm, on_round=on_round,
                   on_stream=on_stream)

    def unit(self, unit_id: str) -> UnitRecord | None:
        """One unit by id (a leading ``#`` is ignored) with the units that supersede it, or None."""
        uid = unit_id.lstrip("#")
        units = self.store.get_units([uid])
        if not units:
            return None
        ends = self.store.superseded_end([uid]).get(uid, [])
        return UnitRecord(units[0], [e for e in ends if e != uid])

    def neighbors(self, node: str, relation: str | None = None) -> list[Neighbour]:
        """Nodes one unit away from a node (an id or a label): the unit's arguments when the
        node is its subject (``out``), the unit's subject when the node is an argument or
        modifier value (``in``). ``relation`` matches the predicate, family or kind
        (case-insensitive). An unknown node is an :class:`InputError` naming it."""
        nid = self.resolve_node(node)
        if nid is None:
            raise NodeNotFound(f"no node {node!r} in the graph (ids and labels are matched after normalisation)")
        want = (relation or "").strip().lower()
        rows: list[tuple[str, str, Unit]] = []
        for u in self.store.get_units(self.store.mentions(nid)):
            if want and want not in (u.predicate.lower(), u.family.lower(), u.kind.lower()):
                continue
            if u.subject_id == nid:
                rows += [("out", n, u) for _, n in u.node_args()]
            else:
                rows.append(("in", node_id(u.subject), u))
        seen: set[tuple[str, str, str]] = set()
        unique = []
        for d, n, u in rows:
            if (d, n, u.id) not in seen and n != nid:
                seen.add((d, n, u.id))
                unique.append((d, n, u))
        labels = {x.id: x.label for x in self.store.get_nodes(list({n for _, n, _ in unique}))}
        return [Neighbour(n, labels.get(n, n), d, u) for d, n, u in unique]

    def resolve_node(self, text: str) -> str | None:
        nid = node_id(text)
        return nid if self.store.get_nodes([nid]) else None

    def resolve_nodes(self, texts: Sequence[str]) -> dict[str, str | None]:
        """Each text -> the node it names, or None: its normalised label's id
        (:meth:`resolve_node`), else the text itself when it is a raw node id. The label wins:
        ``lit:high`` typed by a user names the concept of that label, not the literal (high).
        One store read for all of them, whatever the number of seeds."""
        ids = {t: node_id(t) for t in texts}
        found = {n.id for n in self.store.get_nodes(list(dict.fromkeys([*texts, *ids.values()])))}
        return {t: ids[t] if ids[t] in found else (t if t in found else None) for t in texts}

    def vector_entry(self, text: str, top_k: int = 5, threshold: float = 0.3) -> list[EntryHit]:
        """The nearest entry/derived nodes to a text (similarity ranks, it proves nothing)."""
        vec = self.embedder.embed([text])[0]
        hits = self.vectors.search(vec, top_k=top_k, threshold=threshold)
        nodes = {n.id: n for n in self.store.get_nodes([h[0] for h in hits])}
        return [EntryHit(nid, nodes[nid].label, score) for nid, score in hits if nid in nodes]

    def search(self, text: str, top_k: int = 5, threshold: float = 0.3) -> EntryResult:
        """``kg search``: the entry step (:meth:`entry`) on a text: nodes it names plus the
        nearest node vectors, weighted by specificity."""
        if top_k < 1:  # 0 asks the vectors for nothing: a search that can only miss
            raise InvalidArgument(f"top_k (--top-k) must be at least 1, got {top_k}")
        if not text.strip():  # it listed the nodes nearest the vector of nothing, as if they matched
            raise InvalidArgument("empty search text: give the words to find entry nodes for")
        return self.entry(text, top_k=top_k, threshold=threshold)

    @property
    def entry_finder(self) -> EntryFinder:
        return self.parts.entry_finder

    @property
    def lexical_units(self) -> LexicalUnits:
        """BM25 over the stored unit text (:mod:`kgservice.expansion.lexical`), for retrieval."""
        return self.parts.lexical_units

    def entry(self, question: str, qvec: Any = None, hits: Any = None, **params: Any) -> EntryResult:
        """Entry nodes of a question without an LLM (:mod:`kgservice.entry`): names + vectors,
        weighted by specificity. ``params``: EntryParams fields (top_k, threshold, ...);
        ``hits``: the vector search for ``qvec`` when the caller made it already."""
        from kgservice.entry import EntryParams

        return self.entry_finder.find(question, qvec, EntryParams(**params) if params else None, hits)

    def retrieve(self, question: str, **params: Any) -> Retrieval:
        """The no-LLM retrieval (:func:`kgservice.expansion.retrieve.retrieve`): entry + lexical
        seeds, spreading activation, fusion with vector similarity -> ranked units, plus the
        lexical hop's unit. ``params``: RetrieveParams fields (``hop_weight=0.5`` turns the hop on)."""
        from kgservice.expansion.retrieve import RetrieveParams, retrieve

        return retrieve(self.parts, question, RetrieveParams(**params) if params else None)


    def expand(self, seeds: str | Sequence[str], mode: ExpandMode = "directed", *,
               limit: int | None = None, **spread: float | int | None) -> Expansion:
        """Expansion without the LLM from seed nodes (ids or labels, matched after
        normalisation): ``directed`` traversal, ``spread`` activation (``epsilon``,
        ``max_hops``, ``max_fanout``, ``max_fire`` override the settings; ``limit`` ranked
        nodes), or ``causal`` chains downstream along the 导致 family (``max_hops``, default 3). Whole expansions are kept in the in-memory ``expand`` cache at one store
        version, shared by the CLI, REST and MCP; :meth:`expand_cached` says whether one was."""
        out, _ = self.expand_cached(seeds, mode, limit=limit, peek=False, **spread)
        assert out is not None  # only a peek misses
        return out

    def expand_cached(self, seeds: str | Sequence[str], mode: ExpandMode = "directed", *,
                      limit: int | None = None, peek: bool = False,
                      **spread: float | int | None) -> tuple[Expansion | None, bool]:
        """:meth:`expand` and whether the reply came from the cache. ``peek`` only looks in the
        in-memory front (no store read, no lock wait: for an event loop) and gives
        ``(None, False)`` on a miss."""
        from kgservice.caches import cache_key
        from kgservice.expansion import expand_directed, spread_activation
        from kgservice.expansion.causal import causal_chains

        if mode not in ("directed", "spread", "causal"):
            raise InputError(f"--mode must be 'directed' or 'spread', or 'causal' for causal chains, got {mode!r}")
        given = [seeds] if isinstance(seeds, str) else list(seeds)
        if not given:
            raise InputError("expand needs at least one seed node")
        params = self.spread_params(**{k: v or 0 for k, v in spread.items()}) if mode == "spread" else None
        causal_hops = int(spread.get("max_hops") or 3)
        if mode == "causal" and not 1 <= causal_hops <= 10:
            raise InputError(f"--hops must be 1..10 for causal chains, got {causal_hops}")
        # the in-memory ``expand`` cache: valid at one change-log version (Caches.memo)
        key = cache_key("expand", "kb", given, mode, limit or None,
                        params.key() if params else (causal_hops if mode == "causal" else None))
        if peek:
            out = self.caches.front_peek(key)
            return out, out is not None

        def compute() -> Expansion:
            found = self.resolve_nodes(given)
            ids = list(dict.fromkeys(found[s] or self._node_or_hint(s) for s in given))
            if mode == "causal":
                return CausalExpansion(ids, causal_hops, [causal_chains(self.store, i, causal_hops) for i in ids])
            if params is None:
                res = expand_directed(self.store, ids)
                return DirectedExpansion(res.seeds, res.nodes, res.units, res.superseded,
                                         live_units=self.store.get_units(sorted(res.units)))
            return SpreadExpansion(ids, params, spread_activation(self.store, ids, params, limit=limit or None),
                                   limit)

        return self.caches.memo("expand", key, compute)

    def _node_or_hint(self, node: str) -> str:
        nid = self.resolve_node(node)
        if nid is not None:
            return nid
        hint = ""
        try:
            hits = self.vector_entry(node, top_k=3)
            hint = "; nearest by vector: " + ", ".join(f"{h.label} ({h.score:.2f})" for h in hits) if hits else ""
        except Exception:  # the hint is a courtesy; the error is the answer
            pass
        raise NodeNotFound(f"no node {node!r} in the graph{hint}")

    def export(self, path: Path | str = Path("graphify-out/graph.json"), *, communities: bool = True,
               memory_dir: Path | None = None, feed_memory: bool = True) -> ExportReport:
        """Write the graph.json mirror. Saved answers (those kept in the store, and ``save-result``
        docs in ``memory_dir``, default ``memory/`` beside graph.json) are ingested as units first, so they come back as nodes."""
        from kgservice.export.graphjson import write_graph_json
        from kgservice.pipeline.ingest import ingest_saved_results

        path = Path(path)
        mem = memory_dir or path.parent / "memory"
        fed = None
        if feed_memory and not self.settings.read_only:
            fed = ingest_saved_results(self.parts, mem if mem.is_dir() else None, path if path.exists() else None)
        counts = write_graph_json(self.store, path, communities=communities,
                                  store_communities=not self.settings.read_only)
        return ExportReport(path, counts, mem if fed is not None and mem.is_dir() else None, fed)

    def save_result(self, question: str, answer: str, *, contributor: str, query_type: str = "query",
                    nodes: Sequence[str] = (), outcome: str | None = None, correction: str | None = None) -> SavedResult:
        """graphify's ``save-result`` kept in the store, so every server lists it and any export
        feeds it back (:mod:`kgservice.stores.shared`); returns what was saved."""
        if self.settings.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); saving a result refused")
        from kgservice.graphify.memory import new_saved_result

        rec = new_saved_result(question, answer, query_type, list(nodes), outcome, correction, contributor=contributor)
        self.store.save_result(rec)
        return rec

    def saved_results(self) -> list[SavedResult]:
        """Every result saved through any server of this store, oldest first."""
        return self.store.saved_results()

    def stats(self) -> dict[str, Any]:
        """``backend`` and the store's counts (units, nodes, relations, units per family kind).
        The same keys on every backend and for every content: each known kind is there, 0 when no
        unit has it (a script reading ``kind:synonym`` must not depend on the data or the backend)."""
        from kgservice.families.lexicon import ALL_KINDS

        counts = self.store.counts()
        out: dict[str, Any] = {"backend": self.store.backend}
        out.update({k: counts.get(k, 0) for k in ("units", "nodes", "relations", "superseded_units")})
        out.update({f"kind:{k}": counts.get(f"kind:{k}", 0) for k in ALL_KINDS})
        out.update({k: v for k, v in counts.items() if k not in out and v})  # a kind a custom lexicon adds
        return out

    # -- administration ------------------------------------------------------------
    def doctor(self, repair: bool = False, vectors: bool = True) -> DoctorReport:
        """Check the graph against its units (and vectors against nodes); ``repair`` fixes what it can."""
        from kgservice.admin import doctor

        return doctor.repair(self.parts, vectors=vectors) if repair else doctor.check(self.parts, vectors=vectors)

    def salvage(self, vectors: bool = True) -> tuple[dict[str, Any], DoctorReport]:
        """A damaged embedded store, or one missing its snapshot: rebuild it from every intact
        record (the damaged files are kept beside it), then repair; (what was salvaged, the
        repair report). A store that opens and verifies has nothing to salvage (InputError)."""
        from kgservice.admin import doctor
        from kgservice.admin.recover import salvage

        if not doctor.check(self.parts, vectors=False).unopenable:
            raise InputError("the store opens and verifies: nothing to salvage "
                             "(`kg doctor --repair` fixes drifted indexes and vectors)")
        salvaged = salvage(self.parts)
        return salvaged, doctor.repair(self.parts, vectors=vectors)

    def dump(self, path: Path | str) -> dict[str, Any]:
        """Every unit and node label to one portable, checksummed file."""
        from kgservice.admin.backup import dump

        return dump(self.store, path)

    @_makes_workspace
    def restore(self, path: Path | str, *, replace: bool = False, merge: bool = False,
                embed: bool = True) -> dict[str, Any]:
        """Units from a dump, verified whole before anything is written."""
        from kgservice.admin.backup import restore

        return restore(self.parts, path, replace=replace, merge=merge, embed=embed)

    def migrate(self, dry_run: bool = False) -> Any:
        """``kg migrate``: every pending schema step of the store (those that lock out older
        releases included), or with ``dry_run`` the list of them; a MigrationReport."""
        from kgservice.stores.schema import migrate

        if not self.parts.is_open("store"):  # opened without applying steps, so the report shows them
            # the workspace refused as every read refuses it: this open would make it
            self.parts.__dict__["store"] = self.parts.open_store(schema_mode="check")
        return migrate(self.store.schema_record(), read_only=self.settings.read_only, dry_run=dry_run)

    def cache_stats(self) -> dict[str, Any]:
        return self.caches.stats()

    def clear_caches(self) -> int:
        """Drop every cache entry (graph, vectors and document ledger untouched); returns how many."""
        return self.caches.clear()

    def embed_nodes(self, ids: Sequence[str], batch: int = 256, flush: int = 16_384,
                    known: Mapping[str, str] | None = None) -> int:
        """Embed these nodes' labels and store their vectors (:meth:`NodeVectors.embed`)."""
        return self.node_vectors.embed(ids, batch, flush, known)

    def close(self) -> None:
        self.parts.close()
