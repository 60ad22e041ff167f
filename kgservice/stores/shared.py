"""State every server of one knowledge base must agree on, kept in the graph store itself.

Two servers on one Neo4j answer from the same graph, so anything they derive or collect beside
it has to live where both read it, not in each process's data directory:

- saved results (graphify ``save-result`` / ``POST /v1/results``): a team's feedback on answers;
  a result saved through one server is listed by every other and fed back by any export;
- the graphify community of each node: the first process that numbers the communities of a graph
  stores them, keyed by a digest of that graph, and every process reads them back instead of
  computing its own, so a community id means the same group on every server;
- the graphify mirror itself (graph.json), built once per change-log version by one server
  and read by the others (:mod:`kgservice.export.shared_mirror`; :class:`MirrorState`);
- entity-resolution decisions (:mod:`kgservice.extraction.decisions`): what the model said
  about a pair of labels ("Seattle" / "Seattle, Washington": the same city), so no server asks
  a pair another one has asked, and a dump carries them with the knowledge.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, Field


class SavedResult(BaseModel):
    """One saved answer: the fields of a graphify memory doc (:mod:`kgservice.graphify.memory`)."""

    name: str = Field(description="the memory doc's file name; unique, so saving twice never overwrites")
    type: str = "query"
    date: str
    question: str
    answer: str
    contributor: str
    outcome: str | None = None
    correction: str | None = None
    source_nodes: list[str] = []


class CommunityMap(BaseModel):
    """The community of each node of one graph (``graph`` is :func:`graph_digest` of it)."""

    graph: str
    communities: dict[str, int]


class MergeDecision(BaseModel):
    """The model's answer for one pair of labels: ``a`` / ``b`` are the pair's keys in order
    (:meth:`kgservice.extraction.decisions.MergeDecisions.pair`), ``same`` the answer."""

    a: str = Field(min_length=1)
    b: str = Field(min_length=1)
    same: bool
    reason: str = ""
    model: str = ""
    decided: str = Field(description="when it was asked, ISO 8601 UTC")


@dataclass(frozen=True)
class MirrorState:
    """What the store says of its mirror: the version stored (None before the first publish),
    the sha256 of its graph.json, its chunk count, and the lease (``owner`` building ``building``)."""

    version: int | None
    digest: str | None
    chunks: int | None
    owner: str | None
    building: int | None
    leased: bool


def graph_digest(node_ids: Iterable[str], edges: Iterable[tuple[str, str]]) -> str:
    """sha256 over the node ids and edges, in the order given (callers sort): two processes
    reading the same graph get the same digest whatever its change-log version says."""
    h = hashlib.sha256()
    for nid in node_ids:
        h.update(b"n\0" + nid.encode("utf-8") + b"\0")
    for src, dst in edges:
        h.update(b"e\0" + src.encode("utf-8") + b"\0" + dst.encode("utf-8") + b"\0")
    return h.hexdigest()


__all__ = ["CommunityMap", "MergeDecision", "MirrorState", "SavedResult", "graph_digest"]
