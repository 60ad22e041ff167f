"""The parts of one knowledge base, as one bundle the modules below the front door receive.

Graphiti's ``GraphitiClients`` is the model: a small object holding the clients (store, lexicon,
embedder, vector store, caches, model, job queue, ...) that the functions doing the work take,
so they never call back into the front door. :class:`~kgservice.service.KnowledgeBase` builds
one :class:`Parts` and hands it down (``kb.parts``); its own properties read the same parts from
it, so the front door and the modules below it always share one store handle, one vector store
and one set of caches.

Each part opens on first use (``kg stats`` loads no model; a question opens no job queue), is
kept here, and can be dropped and reopened by the admin commands that swap the files under it
(:meth:`Parts.forget_opened`, :meth:`Parts.reopen_vectors`). What the knowledge base *does* with
the parts lives in the module that does it, as a function taking the bundle:
:func:`kgservice.pipeline.ingest.ingest_units`, :func:`kgservice.lifecycle.text.ingest_document`,
:func:`kgservice.lifecycle.ops.forget_documents`, ... A test can build a ``Parts`` from
settings alone, or put a stand-in part in ``parts.__dict__`` before it is first asked.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from kgservice.caches import Caches
    from kgservice.config import Settings
    from kgservice.entry import EntryFinder
    from kgservice.expansion.lexical import LexicalUnits
    from kgservice.families import Lexicon
    from kgservice.jobs.queue import JobQueue
    from kgservice.llm import LLM
    from kgservice.llm.health import ModelHealth
    from kgservice.stores.base import GraphStore
    from kgservice.vectors import Embedder, VectorStore
    from kgservice.vectors.upkeep import NodeVectors

#: parts that hold the store's files (or were built from the store object): dropped together by
#: :meth:`Parts.forget_opened`, in this order
_ON_THE_FILES = ("caches", "vectors", "entry_finder", "lexical_units", "store")


@dataclass(eq=False)
class Parts:
    """The knowledge base's parts, each opened on first use (see the module doc).

    ``validate_job(kind, payload)`` checks a job before it is queued (the job queue calls it at
    submit time); the front door passes :func:`kgservice.jobs.run.validate_payload` over this
    bundle, so this module imports nothing that imports it."""

    settings: Settings
    validate_job: Callable[[str, Any], Any] | None = None
    _open_lock: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)
    _making: int = field(default=0, init=False, repr=False)  # writes under way that may make the workspace

    @contextmanager
    def making_workspace(self) -> Iterator[None]:
        """Around a write that makes the workspace if nobody made it yet (init, ingest, sync,
        restore: what ``kg --workspace NEW`` may run). Outside one, opening the store of a named
        workspace that does not exist is refused (:meth:`store`)."""
        with self._open_lock:
            self._making += 1
        try:
            yield
        finally:
            with self._open_lock:
                self._making -= 1

    @cached_property
    def lexicon(self) -> Lexicon:
        from kgservice.families import Lexicon

        return Lexicon.load(list(self.settings.lexicon_files), self.settings.tau)

    @cached_property
    def store(self) -> GraphStore:
        """The graph store. A named workspace nobody made is refused here (InputError, the
        message the CLI's reads print: :func:`kgservice.stores.factory.no_workspace`) unless a
        write that makes it is under way: on the embedded store before opening, which would
        create its directory; in a shared store (Neo4j) by asking it once open. Every other part
        opens the store first, so a library read of a mistyped workspace is an error, as on the
        command line, rather than an empty knowledge base (or, embedded, a new one)."""
        return self.open_store()

    def open_store(self, schema_mode: Literal["auto", "check"] = "auto") -> GraphStore:
        """A new graph store, the workspace refused as :attr:`store` says; ``schema_mode``
        "check" opens it without applying schema steps (``kg migrate`` reports them), which
        must not make a workspace either."""
        from kgservice.errors import InputError
        from kgservice.stores.factory import missing_workspace, open_store
        from kgservice.workspaces import unknown

        making = self._making > 0
        if not making and (why := missing_workspace(self.settings)):
            raise InputError(why)
        store = open_store(self.settings, schema_mode)
        if not making and (why := unknown(self.settings, lambda: store)):
            store.close()
            raise InputError(why)
        return store

    @cached_property
    def embedder(self) -> Embedder:
        from kgservice.vectors.embedder import make_embedder

        return make_embedder(self.settings.embedder)

    @cached_property
    def vectors(self) -> VectorStore:
        # under a lock, stored before it is released: two threads (a warm-up and a question)
        # never open two handles (a local vector directory admits one)
        with self._open_lock:
            vs = self.__dict__.get("vectors")
            if vs is None:
                vs = self.__dict__["vectors"] = self.open_vectors()
            return vs

    @cached_property
    def caches(self) -> Caches:
        """The caches, persisted next to the store (``<data_dir>/caches.sqlite3``).

        Kept coherent with the store through its change log (:mod:`kgservice.stores.changelog`);
        a store without one falls back to the unit count as the fingerprint (units are never
        deleted, so it changes exactly when units are added). The top-k bar check uses the
        vector store only if this process already opened it (it has, whenever an ingest just
        embedded new nodes)."""
        from kgservice.caches import CACHE_FILE, Caches

        store = self.store
        clock = store.version_clock()  # shared with the label and BM25 indexes: one read per request
        feed = clock.feed if clock is not None else None
        return Caches(
            self.settings.kb_dir / CACHE_FILE,
            store_state=None if feed is not None else (lambda: int(store.counts().get("units", 0))),
            vectors=self.vectors_if_open,
            changes=feed,
            read_only=self.settings.read_only,
            clock=clock,
            stale_seconds=self.settings.stale_seconds,
            stale_read_seconds=self.settings.stale_read_seconds,
        )

    @cached_property
    def llm(self) -> LLM:
        """The configured model, one per knowledge base, so its usage counts accumulate."""
        return self.new_llm()

    def new_llm(self) -> LLM:
        """A client of the configured model with usage counts of its own (a server gives each
        request one), reporting how its calls end to :attr:`model_health`."""
        from kgservice.llm import LLM

        return LLM.from_settings(self.settings, health=self.model_health)

    @cached_property
    def model_health(self) -> ModelHealth:
        """The answering model's newest known status: the start-up check's, then the last real
        call's (:mod:`kgservice.llm.health`; what ``/readyz`` reports)."""
        from kgservice.llm.health import ModelHealth

        return ModelHealth(self.settings)

    @cached_property
    def entry_finder(self) -> EntryFinder:
        from kgservice.answer.graph_words import stem_uses
        from kgservice.entry import EntryFinder

        return EntryFinder(self.store, self.embedder.embed, self.vectors,
                           word_uses=lambda w: stem_uses(self.lexical_units.index(), w))

    @cached_property
    def lexical_units(self) -> LexicalUnits:
        """BM25 over the stored unit text (:mod:`kgservice.expansion.lexical`), for retrieval."""
        from kgservice.expansion.lexical import LexicalUnits

        return LexicalUnits(self.store)

    @cached_property
    def node_vectors(self) -> NodeVectors:
        """Vector upkeep (:mod:`kgservice.vectors.upkeep`): the vector side of every graph write,
        over these parts (asked when used, so a reopened part is the one used)."""
        from kgservice.vectors.upkeep import NodeVectors, UpkeepParts

        return NodeVectors(self.settings, UpkeepParts(
            store=lambda: self.store, embedder=lambda: self.embedder, caches=lambda: self.caches,
            held=self.vectors_if_open, shared=lambda: self.vectors, open=lambda: self.open_vectors()))

    @cached_property
    def jobs(self) -> JobQueue:
        """The durable ingest-job queue (:mod:`kgservice.jobs`), kept by the store's backend; a
        payload is checked by ``validate_job`` at submit time, so bad notation is refused before
        it is queued."""
        from kgservice.jobs.queue import DEFAULT_MAX_ATTEMPTS

        return self.store.job_queue(self.settings.kb_dir, validate=self.validate_job,
                                    read_only=self.settings.read_only, max_attempts=DEFAULT_MAX_ATTEMPTS)

    # -- opening, dropping and reopening ---------------------------------------------
    def open_vectors(self, recreate: bool = False) -> VectorStore:
        """A new handle on the configured vector store (``vectors`` keeps one;
        :func:`kgservice.vectors.upkeep.open_node_vectors`)."""
        from kgservice.vectors.upkeep import open_node_vectors

        return open_node_vectors(self.settings, self.store, self.embedder, recreate)

    def vectors_if_open(self) -> VectorStore | None:
        """The vector store if these parts already opened it, else None (never opens it)."""
        return self.__dict__.get("vectors")

    def reopen_vectors(self, recreate: bool = False) -> VectorStore:
        """Close and open the vector store again; ``recreate`` drops its collection first
        (a collection embedded with another model is only repaired that way)."""
        old = self.__dict__.pop("vectors", None)
        if old is not None:
            old.close()
        self.__dict__["vectors"] = vs = self.open_vectors(recreate=recreate)
        return vs

    def forget_opened(self) -> None:
        """Close and drop what was opened on the store's files (store, vectors, caches) and the
        indexes built from the old store object (label index, BM25 units), which hold it: each
        reopens on next use (after ``kg restore --replace`` or a salvage swapped the files)."""
        for name in _ON_THE_FILES:
            obj = self.__dict__.pop(name, None)
            if obj is not None and hasattr(obj, "close"):
                try:
                    obj.close()
                except Exception:
                    pass

    def is_open(self, name: str) -> bool:
        """Whether the part ``name`` was opened (asking never opens it)."""
        return name in self.__dict__

    def close(self) -> None:
        """Close every part opened (the job queue and caches before the stores they use)."""
        for name in ("jobs", "caches", "vectors", "store"):
            obj = self.__dict__.get(name)
            if obj is not None:
                obj.close()


__all__ = ["Parts"]
