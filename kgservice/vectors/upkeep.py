"""Node vectors kept in step with the graph: which vector store a deployment opens, embedding new
nodes after a graph write, the write session that holds a local vector directory only while it
upserts, and the repairs after a writer stopped part-way (lost unflushed writes, owed vectors).

The graph is written first and is the truth; the vectors follow it. :class:`NodeVectors` gets the
parts it uses as a plain bundle (:class:`UpkeepParts`); the knowledge base builds it and keeps
the one vector store handle it reads with (``KnowledgeBase.vectors``), which this module only
borrows.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgservice.errors import ConfigError
from kgservice.model import NodeKind

if TYPE_CHECKING:
    from kgservice.caches import Caches
    from kgservice.config import Settings
    from kgservice.stores.base import GraphStore
    from kgservice.vectors import Embedder, VectorStore

log = logging.getLogger(__name__)


def open_node_vectors(settings: Settings, store: GraphStore, embedder: Embedder, recreate: bool = False) -> VectorStore:
    """A new handle on the configured vector store: the graph database's own when it keeps
    vectors (``KG_VECTOR_BACKEND=neo4j``), else qdrant-edge in the data directory or a Qdrant
    server. ``recreate`` drops the collection first."""
    from kgservice.vectors import open_vector_store

    s = settings
    if s.vectors_in_graph:  # the graph connection carries the vectors too
        vs = store.graph_vectors(dim=embedder.dim, model_name=embedder.name, collection=s.vector_collection,
                                 recreate=recreate, candidates=s.neo4j_vector_candidates)
        if vs is None:
            raise ConfigError(f"KG_VECTOR_BACKEND={s.vector_backend}: this graph store keeps no vectors")
        return vs
    from kgservice.vectors.qdrant_store import QdrantLayout

    return open_vector_store(
        dim=embedder.dim, model_name=embedder.name, backend=s.vector_backend,
        url=s.qdrant_url, api_key=s.qdrant_api_key, collection=s.vector_collection,
        path=None if s.qdrant_url else str(s.kb_dir / "qdrant"), recreate=recreate,
        lock_wait=s.vector_lock_wait, layout=QdrantLayout.of(s), family=s.qdrant_collection)


@dataclass(frozen=True)
class UpkeepParts:
    """What vector upkeep uses, each asked when needed (the knowledge base opens its parts on
    first use and may reopen them after a restore): the graph store, the embedder, the caches,
    the reader's vector store (``held``: only if already open; ``shared``: opened if need be),
    and ``open``, a new handle for one write."""

    store: Callable[[], GraphStore]
    embedder: Callable[[], Embedder]
    caches: Callable[[], Caches]
    held: Callable[[], VectorStore | None]
    shared: Callable[[], VectorStore]
    open: Callable[[], VectorStore]


class NodeVectors:
    """The vector side of every graph write (see the module doc)."""

    def __init__(self, settings: Settings, parts: UpkeepParts) -> None:
        self.settings = settings
        self.parts = parts
        self._owing = threading.local()  # per thread: the depth of nested owing() calls

    @contextmanager
    def writer(self) -> Iterator[VectorStore]:
        """The vector store for one write. A local vector directory is owned by one process
        at a time, so unless this knowledge base already holds it open (a reader that also
        writes), a write opens it, upserts and releases it: the lock is held for the upsert
        only (milliseconds to seconds), never while a model embeds, and readers in other
        processes wait for it (``KG_VECTOR_LOCK_WAIT``) instead of being locked out.

        A store whose last writer died before flushing (:attr:`VectorStore.lost_writes`) first
        gets the vectors it lost back (:meth:`restore_lost`)."""
        if self.parts.held() is not None or self.settings.qdrant_url or self.settings.vectors_in_graph:
            vs = self.parts.shared()
            self.restore_lost(vs)
            yield vs
            return
        vs = self.parts.open()
        try:
            self.restore_lost(vs)
            yield vs
        finally:
            vs.close()

    def restore_lost(self, vs: VectorStore | None = None, batch: int = 256, *, owed: bool = False) -> int:
        """After a writer crashed between writing vectors and flushing them, embed every
        entry/derived node the store lacks, under the write lock (rare: only after a crash;
        the graph, written first, says which nodes should have one). Returns how many; 0 when
        nothing was lost. ``vs``: an open writer (default: the knowledge base's store).

        ``owed``: a writer stopped after its graph write and before its vector step
        (:mod:`kgservice.vectors.owed`): besides the missing vectors, the vectors of the nodes its
        change removed are deleted (read before the graph, as ``kg doctor`` does, so a node an
        ingest in flight is adding never looks stray)."""
        vs = self.parts.shared() if vs is None else vs
        if not (vs.lost_writes or owed):
            return 0
        have = vs.ids()
        store = self.parts.store()
        embeddable = {n.id: n.label for n in store.iter_nodes() if n.kind is not NodeKind.LITERAL}
        missing = [(nid, label) for nid, label in embeddable.items() if nid not in have]
        stray = sorted(have - set(embeddable)) if owed else []
        if missing or stray:
            log.warning("the vector store %s lacks the vectors of %d node(s) and holds %d of nodes that are gone (a "
                        "writer stopped before writing or flushing them): putting that right", vs, len(missing),
                        len(stray))
        embedder = self.parts.embedder()
        for i in range(0, len(missing), batch):
            part = missing[i:i + batch]
            vs.upsert([nid for nid, _ in part], embedder.embed([label for _, label in part]))
        if stray:
            vs.delete(stray)
        if vs.lost_writes:
            vs.recovered()
        else:
            vs.flush()
        if missing or stray:  # vector hits change: the change log clears every server's cached answers about them
            from kgservice.stores.changelog import record_change

            ids = [nid for nid, _ in missing] + stray
            record_change(store, ids)
            self.parts.caches().invalidate(ids)
        return len(missing)

    @contextmanager
    def owing(self) -> Iterator[None]:
        """Around a write whose vectors come after its graph write: a durable note says so until
        they are written, so a writer killed in between is found by the next one
        (:mod:`kgservice.vectors.owed`), which then embeds what the killed one owed. On the way
        out, notes other writers left behind are settled. Nested calls share the outer note."""
        local = self._owing
        if getattr(local, "depth", 0) or self.settings.read_only:  # read-only: the write is refused, no note
            local.depth = getattr(local, "depth", 0) + 1
            try:
                yield
            finally:
                local.depth -= 1
            return
        from kgservice.vectors.owed import OwedVectors

        notes = OwedVectors(self.settings.kb_dir)
        note = notes.begin()
        local.depth = 1
        try:
            yield
        except BaseException:
            notes.end(note, failed=True)  # the graph may hold nodes this write never embedded
            raise
        finally:
            local.depth = 0
        self.settle_owed()
        notes.end(note)

    def settle_owed(self) -> int:
        """Embed the vectors writers that stopped (or failed) owed, if any left a note; returns how
        many nodes were embedded (0, after one directory listing, when none did)."""
        from kgservice.vectors.owed import OwedVectors

        notes = OwedVectors(self.settings.kb_dir)
        stale = notes.stale()
        if not stale:
            return 0
        with self.writer() as vs:
            done = self.restore_lost(vs, owed=True)
        notes.clear(stale)
        return done

    def embed(self, ids: Sequence[str], batch: int = 256, flush: int = 16_384,
              known: Mapping[str, str] | None = None) -> int:
        """Embed these nodes' labels and store their vectors: the model runs first (no vector
        lock held), then every ``flush`` vectors go to the store in one writer session. If the model
        fails part-way, the vectors already computed are stored before the error propagates
        (``kg doctor --repair`` embeds the rest).

        ``known``: node id -> label for these ids, as the store just wrote them
        (:attr:`IngestReport.new_labels`); when it covers every id the store is not read again
        (a read-back of every new node is a large part of a Neo4j ingest). Otherwise the ids absent
        from the store are skipped."""
        if known and all(i in known for i in ids):
            nodes = [(i, known[i]) for i in ids]
        else:
            nodes = [(n.id, n.label) for n in self.parts.store().get_nodes(ids)]
        with self._bulk(len(nodes)):
            self._embed_and_store(nodes, batch, flush)
        return len(nodes)

    @contextmanager
    def _bulk(self, expected: int) -> Iterator[None]:
        """A vector store that indexes better in one go (Neo4j's vector index: one population
        instead of a Lucene segment per write transaction) gets told a load of ``expected``
        vectors is coming; it decides whether that is big enough (``bulk_load``)."""
        vs = self.parts.shared() if self.settings.vectors_in_graph and expected else None
        bulk = getattr(vs, "bulk_load", None)
        if bulk is None:
            yield
            return
        with bulk(expected):
            yield

    def _embed_and_store(self, nodes: list[tuple[str, str]], batch: int, flush: int) -> None:
        import numpy as np

        embedder = self.parts.embedder()
        for start in range(0, len(nodes), flush):
            part = nodes[start:start + flush]
            vecs: list[Any] = []
            try:
                for i in range(0, len(part), batch):
                    vecs.append(embedder.embed([label for _, label in part[i:i + batch]]))
            finally:
                if vecs:
                    with self.writer() as vs:
                        # upserts of ~1024 rows (a server's request size): joining all of them
                        # first would allocate one array of the whole batch. The payload is
                        # the node id alone (prepare_upsert): label and kind live in the graph, and
                        # two more strings per point would only add upsert time
                        per, at = max(1, 1024 // batch), 0
                        for g in range(0, len(vecs), per):
                            m = np.concatenate(vecs[g:g + per])
                            vs.upsert([nid for nid, _ in part[at:at + len(m)]], m)
                            at += len(m)
                        vs.optimize()  # edge: indexes segments past its threshold; else a no-op
                        vs.flush()  # durable before the call returns, also when the store stays open
