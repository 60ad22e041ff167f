"""The graph store interface both backends implement (embedded networkx, Neo4j).

Each read method is one "procedure" of DESIGN.md §2: on Neo4j it is one parameterised
Cypher file, on the embedded store a dictionary walk. The expansion layer composes them,
so both backends answer every query through the same Python code and the contract tests
can compare them method by method.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from kgservice.model import IngestReport, Node, Unit

MAX_CLOSURE_DEPTH = 10  # literal bound: Cypher var-length bounds cannot be parameters


class StoreError(RuntimeError):
    pass


class IngestConflict(StoreError):
    """A batch that cannot be applied as a whole; nothing from it was stored."""


class GraphStore(ABC):
    backend: str = "abstract"

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
    def spread_step(self, frontier: Mapping[str, float], tau: Mapping[str, float]) -> dict[str, float]:
        """One hop of spreading activation: energy each neighbour receives from the frontier.

        A frontier node passes ``energy * tau[kind]`` once per distinct (neighbour, kind).
        Content edges are followed forward only (cause -> effect); synonym, belongs_to, of
        and related_to both ways. Edges of superseded units and edges touching literal
        nodes are not walked; kinds missing from ``tau`` pass nothing."""

    def close(self) -> None:  # pragma: no cover - trivial
        pass

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
