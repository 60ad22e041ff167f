"""The embedded graph store: in process, persisted as a snapshot plus an append-only journal.

Zero setup for one user. The graph is held in plain dictionaries (adjacency lists per
relation kind, reverse indexes as sorted lists, units as compact tuples that become
:class:`~kgservice.model.Unit` models only when read), which keeps a million units in
well under a gigabyte and makes a batch cost proportional to the batch, not the store.

Modules: ``records`` (compact unit tuples, interning), ``graph`` (adjacency and how a batch is
applied), ``journal`` (snapshot, framed journal, writer lock, compaction; the on-disk format
is described there), ``recovery`` (salvage reading, swapping in a store built beside) and
``store`` (:class:`EmbeddedStore`, the procedures).
"""

from kgservice.stores.embedded.graph import _Graph, _State
from kgservice.stores.embedded.journal import COMPACT_MIN_BYTES, FORMAT_VERSION, JOURNAL, SNAPSHOT
from kgservice.stores.embedded.store import EmbeddedStore

__all__ = ["COMPACT_MIN_BYTES", "FORMAT_VERSION", "JOURNAL", "SNAPSHOT", "EmbeddedStore", "_Graph", "_State"]
