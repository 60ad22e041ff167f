"""The reads of the Neo4j store: units and nodes, and the procedures expansion and answering
run (mentions, closures, spreading; ``kg.*`` plugin procedures when the server has them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from kgservice.model import Node, NodeKind, Unit
from kgservice.stores.base import PrefetchedReads
from kgservice.stores.neo4j.connection import Neo4jConnection

PAGE = 5000
BULK = 64  # more ids than this: one record of rows (get_*_bulk.cypher), not a record per row


_RESIDENT_FIELDS = frozenset({"tau", "epsilon", "max_hops", "e0", "max_fanout", "max_fire",
                              "degree_damping", "seed_backflow"})


def _resident_params(params: Any) -> bool:
    import dataclasses

    for f in dataclasses.fields(params):
        if f.name in _RESIDENT_FIELDS:
            continue
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if getattr(params, f.name) != default:
            return False
    return True


class Neo4jProcedures(Neo4jConnection):
    """Units, nodes and the named read procedures."""

    # -- units and nodes ----------------------------------------------------------------
    def get_units(self, ids: Iterable[str]) -> list[Unit]:
        wanted = list(ids)
        if len(wanted) > BULK:
            found = {r[0]: r[1] for row in self.read("get_units_bulk", ids=wanted) for r in row["rows"]}
        else:
            found = {r["id"]: r["json"] for r in self.read("get_units", ids=wanted)}
        return [Unit.model_validate_json(found[i]) for i in wanted if i in found]

    def iter_units(self) -> Iterator[Unit]:
        after = ""
        while True:
            rows = self.read("page_units", after=after, limit=PAGE)
            for r in rows:
                yield Unit.model_validate_json(r["json"])
            if len(rows) < PAGE:
                return
            after = rows[-1]["id"]

    def get_nodes(self, ids: Iterable[str]) -> list[Node]:
        wanted = list(ids)
        if len(wanted) > BULK:
            found = {r[0]: {"label": r[1], "kind": r[2]} for row in self.read("get_nodes_bulk", ids=wanted)
                     for r in row["rows"]}
        else:
            found = {r["id"]: r for r in self.read("get_nodes", ids=wanted)}
        return [Node(id=i, label=found[i]["label"], kind=NodeKind(found[i]["kind"])) for i in wanted if i in found]

    def iter_nodes(self) -> Iterator[Node]:
        after = ""
        while True:
            rows = self.read("page_nodes", after=after, limit=PAGE)
            for r in rows:
                yield Node(id=r["id"], label=r["label"], kind=NodeKind(r["kind"]))
            if len(rows) < PAGE:
                return
            after = rows[-1]["id"]

    def counts(self) -> dict[str, int]:
        r = self.read("counts")[0]
        out = {k: r[k] for k in ("units", "nodes", "relations", "superseded_units")}
        for row in r["kinds"]:
            out[f"kind:{row['kind']}"] = row["n"]
        return out

    # -- procedures -----------------------------------------------------------------------
    def _column(self, name: str, column: str, **params: Any) -> list[str]:
        return [r[column] for r in self.read(name, **params)]

    def subject_mentions(self, node_id: str) -> list[str]:
        return list(self.read("subject_mentions", id=node_id)[0]["units"])

    def context_mentions(self, node_id: str) -> list[str]:
        return list(self.read("context_mentions", id=node_id)[0]["units"])

    def mentions(self, node_id: str) -> list[str]:
        return self.mentions_of([node_id])[node_id]

    def _paired(self, name: str, keys: str, values: str, ids: list[str]) -> dict[str, Any]:
        """A procedure that answers many ids in one row of parallel lists, as a dict (one
        record instead of one per id: thousands per question for the readers that use it)."""
        if not ids:
            return {}
        row = self.read(name, ids=ids)[0]
        return dict(zip(row[keys], row[values]))

    def mentions_of(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        ids = list(dict.fromkeys(node_ids))
        found = self._paired("mentions_of", "nodes", "units", ids)
        return {n: list(found.get(n, [])) for n in ids}

    def mention_counts(self, node_ids: Sequence[str]) -> dict[str, int]:
        ids = list(dict.fromkeys(node_ids))
        found = self._paired("mention_counts", "nodes", "counts", ids)
        return {n: int(found.get(n, 0)) for n in ids}

    def narrowed_by(self, node_id: str) -> list[str]:
        return self._column("narrowed_by", "node", id=node_id)

    def narrows(self, node_id: str) -> list[str]:
        return self._column("narrows", "node", id=node_id)

    def synonym_class(self, node_id: str) -> list[str]:
        return self._column("synonym_class", "node", id=node_id) or [node_id]

    def belongs_to_parents(self, node_ids: Sequence[str]) -> list[str]:
        return self._column("belongs_to_parents", "node", ids=list(node_ids))

    def belongs_to_ancestors(self, node_id: str) -> dict[str, int]:
        return {r["ancestor"]: r["depth"] for r in self.read("belongs_to_closure", id=node_id)}

    def sunk_units(self, node_id: str) -> list[tuple[str, str]]:
        rows = self.read("belongs_to_closure", id=node_id)
        return sorted((u, r["ancestor"]) for r in rows for u in r["units"])

    def superseded_end(self, unit_ids: Sequence[str]) -> dict[str, list[str]]:
        found = self._paired("superseded_end", "units", "ends", list(unit_ids))  # superseded ones only
        return {u: list(found.get(u, [u])) for u in unit_ids}

    def node_superseded_end(self, node_id: str) -> list[str]:
        return self._column("node_superseded_end", "node", id=node_id) or [node_id]

    def directed_reads(self, seeds: Sequence[str]) -> PrefetchedReads:
        row = self.read("directed_expand", ids=list(dict.fromkeys(seeds)))[0]
        reads = PrefetchedReads(
            node_ends={k: sorted(set(v)) or [k] for k, v in row["node_ends"]},
            classes={k: sorted({*v, k}) for k, v in row["classes"]},
            subject={k: sorted(v) for k, v in row["subject"]},
            context={k: sorted(v) for k, v in row["context"]},
            ancestors={k: dict(v) for k, v in row["ancestors"]},
            derived={k: sorted(v) for k, v in row["narrowed_by"]},
            bases={k: sorted(v) for k, v in row["narrows"]},
            unit_ends={k: sorted(v) for k, v in row["unit_ends"]},
        )
        for seed in seeds:
            if seed not in reads.node_ends:
                reads.add_unknown_seed(seed)
        return reads

    def plugin_procedures(self) -> set[str]:
        """The kg.* procedures the server has loaded (empty without kgservice's plugin)."""
        return {r["name"] for r in self.read("plugin_procedures")}

    def spread_resident(self, seeds: Mapping[str, float], params: Any,
                        limit: int | None = None) -> tuple[dict[str, float], int, int] | None:
        """The whole spread in one round trip to ``kg.spreadLists`` when the server has the
        plugin; None (the hop loop over spread_step.cypher) when it has not, or when params
        carry a knob the plugin does not know. With ``limit`` the server sends only the
        ``limit`` most energetic nodes (a popular seed activates 200k: unpacking them all cost
        more than the spread). ``spread_engine`` picks the plugin's engine: 'auto' (the
        resident in-memory graph unless the server turned it off), 'resident' or 'walk'."""
        if self.use_resident is None:
            self.use_resident = "kg.spreadLists" in self.plugin_procedures()
        if not self.use_resident or not _resident_params(params):
            return None
        row = self.read("spread_resident", seeds={k: float(v) for k, v in seeds.items()},
                         tau={k: float(v) for k, v in params.tau.items()}, epsilon=float(params.epsilon),
                         max_hops=int(params.max_hops), max_fanout=int(params.max_fanout or 0),
                         max_fire=int(params.max_fire or 0),
                         degree_damping=float(getattr(params, "degree_damping", 0.0)),
                         seed_backflow=bool(getattr(params, "seed_backflow", True)),
                         limit=int(limit or 0), engine=self.spread_engine)[0]
        return dict(zip(row["nodes"], row["energies"])), int(row["hops"]), int(row["activated"])
    def causal_step(self, node_ids: Sequence[str], family: str) -> list[tuple[str, str, str]]:
        rows = self.read("causal_step", ids=list(dict.fromkeys(node_ids)), family=family)
        return [(r["src"], r["dst"], r["unit"]) for r in rows]

    def spread_step(self, frontier: Mapping[str, float], tau: Mapping[str, float],
                    max_fanout: int | None = None, degree_damping: float = 0.0) -> dict[str, float]:
        items = sorted(frontier.items())
        row = self.read("spread_step", ids=[k for k, _ in items], energies=[v for _, v in items],
                         tau={k: float(v) for k, v in tau.items()}, max_fanout=max_fanout,
                         degree_damping=float(degree_damping))[0]
        return dict(zip(row["nodes"], row["energies"]))
