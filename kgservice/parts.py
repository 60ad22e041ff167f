"""What the modules below the front door use of it, as Protocols.

:class:`~kgservice.service.KnowledgeBase` builds every part; the retrieval, the ask and text-ingest
pipelines, the job runner and worker, and the admin commands (doctor, dump/restore, recover) receive
it typed as one of these, so each says which parts it touches and none of them names (or imports)
``service.py``: the import graph has no arrow back up to the front door. ``KnowledgeBase``
satisfies each structurally; a test double needs only the members listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kgservice.caches import Caches
    from kgservice.convert.source import Source
    from kgservice.config import Settings
    from kgservice.entry import EntryFinder
    from kgservice.expansion.lexical import LexicalUnits
    from kgservice.families import Lexicon
    from kgservice.jobs.queue import JobQueue
    from kgservice.lifecycle.model import ChangeResult
    from kgservice.llm import LLM
    from kgservice.model import IngestReport, Unit
    from kgservice.stores.base import GraphStore
    from kgservice.vectors import Embedder, VectorStore
    from kgservice.vectors.upkeep import NodeVectors


class Graph(Protocol):
    """The store, its relation vocabulary and the settings it was opened with."""

    settings: Settings

    @property
    def store(self) -> GraphStore: ...

    @property
    def lexicon(self) -> Lexicon: ...


class Embedding(Graph, Protocol):
    """The graph plus the embedding model and the vector store of its nodes."""

    @property
    def embedder(self) -> Embedder: ...

    @property
    def vectors(self) -> VectorStore: ...


class Retrieving(Embedding, Protocol):
    """The no-LLM retrieval (:mod:`kgservice.expansion.retrieve`): entry, lexical units, vectors, spreading."""

    @property
    def entry_finder(self) -> EntryFinder: ...

    @property
    def lexical_units(self) -> LexicalUnits: ...


class Asking(Retrieving, Protocol):
    """The ask pipeline (:mod:`kgservice.pipeline.asking`): retrieval plus the model and the caches."""

    @property
    def llm(self) -> LLM: ...

    @property
    def caches(self) -> Caches: ...


class Ingesting(Embedding, Protocol):
    """Text and saved-result ingest (:mod:`kgservice.pipeline.ingest`) and the job runner."""

    @property
    def llm(self) -> LLM: ...

    def ingest_units(self, units: Sequence[Unit], embed: bool = True,
                     progress: Callable[[int], None] | None = None,
                     on_vectors: Callable[[int], None] | None = None) -> IngestReport: ...

    def ingest_document(self, doc_id: str, text: str, *, mode: str | None = None, title: str | None = None,
                        root: str | None = None, expect_version: int | None = None, embed: bool = True,
                        force: bool = False, source: Source | None = None) -> ChangeResult: ...

    def forget(self, doc_ids: Sequence[str]) -> ChangeResult: ...


class Changing(Ingesting, Protocol):
    """The document lifecycle (:mod:`kgservice.lifecycle`): ingest as documents, and the atomic
    change's aftermath (new nodes embedded, orphans' vectors deleted, caches dropped)."""

    @property
    def caches(self) -> Caches: ...

    @property
    def node_vectors(self) -> NodeVectors: ...

    def parse_unit_files(self, files: Sequence[Path]) -> list[Unit]: ...

    def ingest_text(self, paths: Any, mode: str | None = None, *, embed: bool = True, force: bool = False,
                    progress: Any = None) -> Any: ...


class Working(Ingesting, Protocol):
    """The job worker: the queue it claims from, the caches it prunes, and what its jobs run."""

    @property
    def jobs(self) -> JobQueue: ...

    @property
    def caches(self) -> Caches: ...


class Administering(Graph, Protocol):
    """``kg doctor``, ``kg dump`` / ``restore`` and the recovery commands (:mod:`kgservice.admin`)."""

    @property
    def vectors(self) -> VectorStore: ...

    @property
    def caches(self) -> Caches: ...

    @property
    def node_vectors(self) -> NodeVectors: ...

    def reopen_vectors(self, recreate: bool = False) -> VectorStore: ...

    def ingest_units(self, units: Sequence[Unit], embed: bool = True,
                     progress: Callable[[int], None] | None = None) -> IngestReport: ...

    def forget_opened(self) -> None: ...


__all__ = ["Administering", "Asking", "Embedding", "Graph", "Ingesting", "Retrieving", "Working"]
