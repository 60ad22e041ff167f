"""The data model at every boundary: units (the ground truth), their values, and graph nodes.

The JSON form of :class:`Unit` is the interchange format (``kg dump``, LLM output schema,
graph.json unit records), so it is a pydantic model; ids are derived from labels by
:mod:`kgservice.ids` and never typed by hand.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    model_serializer,
    model_validator,
)

from kgservice.ids import literal_id, node_id


class NodeKind(str, Enum):
    ENTRY = "entry"
    DERIVED = "derived"
    LITERAL = "literal"


class Value(BaseModel):
    """An argument or modifier value: exactly one of ``node`` ({X}), ``literal`` ((X)), ``unit`` (#id)."""

    model_config = ConfigDict(frozen=True)

    node: str | None = None
    literal: str | None = None
    unit: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> "Value":
        present = [k for k in ("node", "literal", "unit") if getattr(self, k) is not None]
        if len(present) != 1:
            raise ValueError(f"a value needs exactly one of node/literal/unit, got {present or 'none'}")
        return self

    @model_serializer
    def _only_set(self) -> dict[str, str]:
        """JSON form carries just the one key that is set: {"node": ...} / {"literal": ...} / {"unit": ...}."""
        for key in ("node", "literal", "unit"):
            val = getattr(self, key)
            if val is not None:
                return {key: val}
        return {}

    @property
    def node_ref(self) -> str | None:
        """Graph node id this value points at (entry or literal), None for unit refs."""
        if self.node is not None:
            return node_id(self.node)
        if self.literal is not None:
            return literal_id(self.literal)
        return None


class Mod(BaseModel):
    model_config = ConfigDict(frozen=True)

    slot: str
    value: Value


Mode = Literal["summary", "detail", "manual"]


class Unit(BaseModel):
    """One structured fact. ``family`` is the base member of the predicate's family and
    ``kind`` the family class (synonym, belongs_to, of, content, related_to, superseded,
    narrows), both filled from the lexicon at parse time so stores never need it."""

    model_config = ConfigDict(frozen=True)

    id: str
    subject: str
    predicate: str
    family: str
    kind: str
    inverse: bool = False  # predicate states the relation object-first ("Y supersedes X")
    args: tuple[Value, ...] = Field(min_length=1)
    mods: tuple[Mod, ...] = ()
    supersedes: tuple[str, ...] = ()
    doc: str | None = None
    mode: Mode = "manual"
    ingested_at: str | None = None

    @property
    def subject_id(self) -> str:
        return node_id(self.subject)

    def node_args(self) -> list[tuple[int, str]]:
        """(position, node id) of every argument that is an entry/derived node."""
        return [(i, node_id(a.node)) for i, a in enumerate(self.args) if a.node is not None]

    def context_node_ids(self) -> list[str]:
        """Node ids where this unit mentions a node other than as subject (args and mod values)."""
        seen: dict[str, None] = {}
        for value in list(self.args) + [m.value for m in self.mods]:
            ref = value.node_ref
            if ref is not None:
                seen.setdefault(ref, None)
        return list(seen)


class Node(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    label: str
    kind: NodeKind


class IngestReport(BaseModel):
    units_added: int = 0
    units_unchanged: int = 0
    nodes_added: int = 0
    touched_nodes: list[str] = Field(default_factory=list)
    new_embeddable_nodes: list[str] = Field(default_factory=list)
    # new unit id -> the live unit stating the same fact (same subject, family, arguments): not added
    duplicates: dict[str, str] = Field(default_factory=dict)
    _new_labels: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def new_labels(self) -> dict[str, str]:
        """Node id -> label of ``new_embeddable_nodes``, filled by a store that has them at
        hand (both stores; Neo4j not for staged batches), so the ingest embeds them without
        reading them back (a large part of a Neo4j ingest). A private
        attribute: never in the report's JSON or CLI output. Empty: ``embed_nodes`` reads the
        labels from the store."""
        return self._new_labels
