"""The knowledge base as one object: settings -> store, lexicon, embedder, vectors.

The CLI and the pipelines talk to this, not to backends, so switching from the embedded
default to Neo4j + a Qdrant server is configuration only. Heavy parts (embedding model,
Qdrant client) open lazily: `kg stats` should not load a model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
        from kgservice.vectors import open_vector_store

        s = self.settings
        return open_vector_store(
            dim=self.embedder.dim, model_name=self.embedder.name, backend=s.vector_backend,
            url=s.qdrant_url, api_key=s.qdrant_api_key, collection=s.qdrant_collection,
            path=None if s.qdrant_url else str(s.data_dir / "qdrant"))

    @cached_property
    def caches(self):
        from kgservice.caches import open_caches

        return open_caches(self)

    def spread_params(self, **over: float | int) -> SpreadParams:
        tau = {k: self.lexicon.tau_of(k) for k in SPREAD_KINDS}  # the lexicon (+ user overrides) is the one source
        s, lex = self.settings, self.lexicon.spread
        damping = s.spread_degree_damping if s.spread_degree_damping is not None else lex.get("degree_damping", 0.0)
        backflow = s.spread_seed_backflow if s.spread_seed_backflow is not None else lex.get("seed_backflow", True)
        return SpreadParams(tau=tau, epsilon=float(over.get("epsilon") or self.settings.epsilon),
                            max_hops=int(over.get("max_hops") or self.settings.max_hops),
                            max_fanout=over.get("max_fanout") or self.settings.spread_max_fanout,
                            max_fire=over.get("max_fire") or self.settings.spread_max_fire,
                            degree_damping=float(damping), seed_backflow=bool(backflow))

    # -- writes ------------------------------------------------------------------
    def ingest_units(self, units: Sequence[Unit], embed: bool = True,
                     progress: Callable[[int], None] | None = None) -> IngestReport:
        """Graph first (atomic), then vectors for the entry/derived nodes it added.

        If embedding fails after the graph batch landed, the graph is still consistent and
        `kg doctor --repair` embeds the missing nodes; vectors never point at absent nodes."""
        if self.settings.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); ingest refused")
        report = self.store.ingest(units, progress=progress)
        if embed and report.new_embeddable_nodes:
            self.embed_nodes(report.new_embeddable_nodes)
        self.caches.invalidate(report.touched_nodes)
        return report

    def embed_nodes(self, ids: Sequence[str], batch: int = 256) -> int:
        nodes = self.store.get_nodes(ids)
        for i in range(0, len(nodes), batch):
            chunk = nodes[i:i + batch]
            vecs = self.embedder.embed([n.label for n in chunk])
            self.vectors.upsert([n.id for n in chunk], vecs, [{"label": n.label, "kind": n.kind.value} for n in chunk])
        return len(nodes)

    # -- reads -------------------------------------------------------------------
    def resolve_node(self, text: str) -> str | None:
        nid = node_id(text)
        return nid if self.store.get_nodes([nid]) else None

    @cached_property
    def entry_finder(self):
        from kgservice.entry import EntryFinder

        return EntryFinder(self.store, self.embedder.embed, self.vectors)

    def entry(self, question: str, qvec=None, **params):
        """Entry nodes of a question without an LLM (:mod:`kgservice.entry`): names + vectors,
        weighted by specificity. ``params``: EntryParams fields (top_k, threshold, ...)."""
        from kgservice.entry import EntryParams

        return self.entry_finder.find(question, qvec, EntryParams(**params) if params else None)

    def retrieve(self, question: str, **params):
        """The no-LLM retrieval (:func:`kgservice.expansion.retrieve.retrieve`): entry, spreading
        activation, fusion with vector similarity -> ranked units."""
        from kgservice.expansion.retrieve import RetrieveParams, retrieve

        return retrieve(self, question, RetrieveParams(**params) if params else None)

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
