"""The knowledge base as one object: settings -> store, lexicon, embedder, vectors.

The CLI and the pipelines talk to this, not to backends, so switching from the embedded
default to Neo4j + a Qdrant server is configuration only. Heavy parts (embedding model,
Qdrant client) open lazily: `kg stats` should not load a model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

from kgservice.config import Settings
from kgservice.expansion.spread import SpreadParams
from kgservice.families import SPREAD_KINDS, Lexicon
from kgservice.ids import node_id
from kgservice.model import IngestReport, Unit
from kgservice.stores.base import GraphStore, ReadOnlyError, StoreError  # noqa: F401 (ReadOnlyError re-exported)
from kgservice.stores.factory import open_store


@dataclass
class EntryHit:
    node_id: str
    label: str
    score: float


class KnowledgeBase:
    def __init__(self, settings: Settings):
        self.settings = settings

    @cached_property
    def lexicon(self) -> Lexicon:
        return Lexicon.load(list(self.settings.lexicon_files), self.settings.tau)

    @cached_property
    def store(self) -> GraphStore:
        return open_store(self.settings)

    @cached_property
    def embedder(self):
        from kgservice.vectors.embedder import make_embedder

        return make_embedder(self.settings.embedder)

    @cached_property
    def vectors(self):
        return self.open_vectors()

    def open_vectors(self, recreate: bool = False):
        """A new handle on the configured vector store (``vectors`` caches one)."""
        from kgservice.vectors import open_vector_store

        s = self.settings
        return open_vector_store(
            dim=self.embedder.dim, model_name=self.embedder.name, backend=s.vector_backend,
            url=s.qdrant_url, api_key=s.qdrant_api_key, collection=s.qdrant_collection,
            path=None if s.qdrant_url else str(s.data_dir / "qdrant"), recreate=recreate,
            lock_wait=s.vector_lock_wait)

    @contextmanager
    def vector_writer(self) -> Iterator:
        """The vector store for one write. A local vector directory is owned by one process
        at a time, so unless this knowledge base already holds it open (a reader that also
        writes), a write opens it, upserts and releases it: the lock is held for the upsert
        only (milliseconds to seconds), never while a model embeds, and readers in other
        processes wait for it (``KG_VECTOR_LOCK_WAIT``) instead of being locked out."""
        if "vectors" in self.__dict__ or self.settings.qdrant_url:
            yield self.vectors
            return
        vs = self.open_vectors()
        try:
            yield vs
        finally:
            vs.close()

    @cached_property
    def caches(self):
        from kgservice.caches import open_caches

        return open_caches(self)

    def spread_params(self, **over: float | int) -> SpreadParams:
        tau = {k: self.lexicon.tau_of(k) for k in SPREAD_KINDS}  # the lexicon (+ user overrides) is the one source
        return SpreadParams(tau=tau, epsilon=float(over.get("epsilon") or self.settings.epsilon),
                            max_hops=int(over.get("max_hops") or self.settings.max_hops),
                            max_fanout=over.get("max_fanout") or self.settings.spread_max_fanout,
                            max_fire=over.get("max_fire") or self.settings.spread_max_fire)

    # -- writes ------------------------------------------------------------------
    def ingest_units(self, units: Sequence[Unit], embed: bool = True,
                     progress: Callable[[int], None] | None = None) -> IngestReport:
        """Graph first (atomic), then vectors for the entry/derived nodes it added.

        If embedding fails after the graph batch landed, the graph is still consistent and
        `kg doctor --repair` embeds the missing nodes; vectors never point at absent nodes."""
        if self.settings.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); ingest refused")
        warm = self._warm_embedder() if embed else None
        try:
            report = self.store.ingest(units, progress=progress)
        finally:
            if warm is not None:
                warm.join()
        if embed and report.new_embeddable_nodes:
            self.embed_nodes(report.new_embeddable_nodes)
        self.caches.invalidate(report.touched_nodes)
        return report

    def _warm_embedder(self):
        """Load the embedding model in a thread while the graph batch is written (both take
        about a second; the model is needed right after). Errors surface on first real use."""
        import threading

        def load() -> None:
            try:
                e = self.embedder
                if hasattr(e, "load"):
                    e.load()
            except Exception:  # reported by embed_nodes, where the model is used
                pass

        t = threading.Thread(target=load, name="kg-embedder-warmup", daemon=True)
        t.start()
        return t

    def embed_nodes(self, ids: Sequence[str], batch: int = 256, flush: int = 16_384) -> int:
        """Embed these nodes' labels and store their vectors: the model runs first (no vector
        lock held), then every ``flush`` vectors go to the store in one upsert. If the model
        fails part-way, the vectors already computed are stored before the error propagates
        (``kg doctor --repair`` embeds the rest)."""
        import numpy as np

        nodes = self.store.get_nodes(ids)
        for start in range(0, len(nodes), flush):
            part = nodes[start:start + flush]
            vecs: list = []
            try:
                for i in range(0, len(part), batch):
                    vecs.append(self.embedder.embed([n.label for n in part[i:i + batch]]))
            finally:
                done = part[:sum(len(v) for v in vecs)]
                if done:
                    with self.vector_writer() as vs:
                        vs.upsert([n.id for n in done], np.concatenate(vecs),
                                  [{"label": n.label, "kind": n.kind.value} for n in done])
                        vs.optimize()  # edge: indexes segments past its threshold; else a no-op
        return len(nodes)

    # -- reads -------------------------------------------------------------------
    def resolve_node(self, text: str) -> str | None:
        nid = node_id(text)
        return nid if self.store.get_nodes([nid]) else None

    def vector_entry(self, text: str, top_k: int = 5, threshold: float = 0.3) -> list[EntryHit]:
        vec = self.embedder.embed([text])[0]
        hits = self.vectors.search(vec, top_k=top_k, threshold=threshold)
        nodes = {n.id: n for n in self.store.get_nodes([h[0] for h in hits])}
        return [EntryHit(nid, nodes[nid].label, score) for nid, score in hits if nid in nodes]

    def close(self) -> None:
        if "caches" in self.__dict__:
            self.caches.close()
        if "vectors" in self.__dict__:
            self.vectors.close()
        if "store" in self.__dict__:
            self.store.close()
