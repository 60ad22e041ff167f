"""The change log on Neo4j (:mod:`kgservice.stores.changelog` describes it): a ``(:KgMeta
{id:'state'}).version`` counter and ``(:KgChange)`` nodes, written inside each batch's
transaction (``changes_record``, via :func:`~kgservice.stores.changelog.neo4j_change_step`) and
read here through the store's named procedures."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgservice.stores.changelog import Change

if TYPE_CHECKING:
    from kgservice.stores.neo4j.connection import Neo4jConnection


class Neo4jChangeFeed:
    def __init__(self, store: Neo4jConnection):
        self.store = store

    def version(self) -> int:
        return int(self.store.read("changes_version")[0]["version"])

    def since(self, after: int, upto: int) -> list[Change]:
        return [Change(seq=r["seq"], touched=list(r["touched"] or []), everything=bool(r["all"]), by=r["by"],
                       units=None if r["units"] is None else list(r["units"]))
                for r in self.store.read("changes_since", after=after, upto=upto)]

    def prune(self, keep: int = 10_000) -> int:
        """Drop all but the newest ``keep`` changes (readers further behind clear their caches)."""
        below = self.version() - max(0, keep)
        if below <= 0:
            return 0
        total = 0
        while True:
            n = int(self.store.write("changes_prune", below=below, limit=10_000)[0]["deleted"])
            total += n
            if n < 10_000:
                return total
