"""The JSON schema the model must follow, mirroring the Unit JSON form (DESIGN §1).

The model writes ``subject, predicate, args[{node|literal}], mods[{slot, node|literal|unit}],
supersedes[]`` and an optional local ``id``; the fields only code can know — ``family``
(from the lexicon), ``doc``, ``mode``, ``ingested_at`` and the content-hash ``id`` — are filled
by :func:`to_units`. Extra keys a model adds (a guessed ``family``, say) are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kgservice.families import Lexicon
from kgservice.ids import content_unit_id, normalise_label
from kgservice.model import Mod, Mode, Unit, Value

MAX_LABEL = 120  # characters; a longer "label" is a copied clause, not a concept


def _label(v: str, what: str) -> str:
    v = re.sub(r"\s+", " ", str(v)).strip()
    if not v:
        raise ValueError(f"empty {what}")
    if len(v) > MAX_LABEL:
        raise ValueError(f"{what} is {len(v)} characters (max {MAX_LABEL}): write a short label, not a sentence")
    return v


class XValue(BaseModel):
    model_config = ConfigDict(extra="ignore")

    node: str | None = None
    literal: str | None = None

    @model_validator(mode="after")
    def _one(self) -> "XValue":
        if (self.node is None) == (self.literal is None):
            raise ValueError('an argument is exactly one of {"node": ...} or {"literal": ...}')
        if self.node is not None:
            self.node = _label(self.node, "node label")
        else:
            self.literal = _label(self.literal or "", "literal")
        return self


class XMod(BaseModel):
    model_config = ConfigDict(extra="ignore")

    slot: str
    node: str | None = None
    literal: str | None = None
    unit: str | None = None

    @field_validator("slot")
    @classmethod
    def _slot(cls, v: str) -> str:
        return _label(v, "modifier slot")

    @model_validator(mode="after")
    def _one(self) -> "XMod":
        present = [k for k in ("node", "literal", "unit") if getattr(self, k) is not None]
        if len(present) != 1:
            raise ValueError(f'a modifier row has exactly one of node / literal / unit, got {present or "none"}')
        key = present[0]
        setattr(self, key, _label(getattr(self, key), f"modifier {key}"))
        return self


class XUnit(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str | None = None
    subject: str
    predicate: str
    args: list[XValue] = Field(min_length=1)
    mods: list[XMod] = Field(default_factory=list)
    supersedes: list[str] = Field(default_factory=list)

    @field_validator("subject")
    @classmethod
    def _subject(cls, v: str) -> str:
        return _label(v, "subject")

    @field_validator("predicate")
    @classmethod
    def _predicate(cls, v: str) -> str:
        return _label(v, "predicate")

    def node_labels(self) -> list[str]:
        out = [self.subject]
        out += [a.node for a in self.args if a.node is not None]
        out += [m.node for m in self.mods if m.node is not None]
        return out

    def text_fields(self) -> list[str]:
        out = [self.subject, self.predicate]
        out += [a.node or a.literal or "" for a in self.args]
        out += [m.slot for m in self.mods] + [m.node or m.literal or "" for m in self.mods]
        return out


class Extraction(BaseModel):
    """The reply of the ``extract`` prompt (all modes)."""

    model_config = ConfigDict(extra="ignore")

    units: list[XUnit]  # required: a reply without "units" (e.g. {"facts": [...]}) is wrong, not empty
    mentions: list[str] = Field(default_factory=list)

    @field_validator("mentions")
    @classmethod
    def _mentions(cls, v: list[str]) -> list[str]:
        return [_label(m, "mention") for m in v if str(m).strip()]

    @model_validator(mode="after")
    def _refs(self) -> "Extraction":
        local = [u.id for u in self.units if u.id]
        if len(local) != len(set(local)):
            raise ValueError("two units share a local id")
        known = set(local)
        for u in self.units:
            for ref in u.supersedes + [m.unit for m in u.mods if m.unit is not None]:
                if ref not in known:
                    raise ValueError(f"unit {u.id or u.subject!r} refers to id {ref!r}, which no unit in the reply has")
        deps = {u.id: set(u.supersedes + [m.unit for m in u.mods if m.unit is not None]) for u in self.units if u.id}
        resolved: set[str] = set()
        while True:
            ready = {i for i, d in deps.items() if i not in resolved and d <= resolved}
            if not ready:
                break
            resolved |= ready
        if set(deps) - resolved:
            raise ValueError("units refer to each other in a cycle: " + ", ".join(sorted(set(deps) - resolved)))
        return self

    def node_labels(self) -> list[str]:
        seen: dict[str, str] = {}
        for label in [lbl for u in self.units for lbl in u.node_labels()] + list(self.mentions):
            seen.setdefault(normalise_label(label), label)
        return list(seen.values())


class SameConcept(BaseModel):
    """The reply of the ``same_concept`` prompt."""

    same: bool
    reason: str = ""


def to_units(
    ex: Extraction,
    lexicon: Lexicon,
    *,
    doc: str | None,
    mode: Mode,
    rename: Mapping[str, str] | None = None,
) -> list[Unit]:
    """Extraction -> stored units with content-hash ids (as the parser gives id-less units),
    after ``rename`` (label -> existing label, from entity resolution)."""
    from kgservice.notation.serializer import format_unit

    rename = dict(rename or {})

    def lbl(x: str) -> str:
        return rename.get(x, x)

    done: dict[str, str] = {}  # local id -> content id
    units: list[Unit] = []
    todo = list(ex.units)
    while todo:
        progressed = False
        for xu in list(todo):
            refs = xu.supersedes + [m.unit for m in xu.mods if m.unit is not None]
            if any(r not in done for r in refs):
                continue
            info = lexicon.resolve(xu.predicate, object_is_literal=xu.args[0].literal is not None)
            mods = []
            for m in xu.mods:
                if m.node is not None:
                    mods.append(Mod(slot=m.slot, value=Value(node=lbl(m.node))))
                elif m.literal is not None:
                    mods.append(Mod(slot=m.slot, value=Value(literal=m.literal)))
                else:
                    mods.append(Mod(slot=m.slot, value=Value(unit=done[m.unit or ""])))
            probe = Unit(
                id="_", subject=lbl(xu.subject), predicate=xu.predicate, family=info.base, kind=info.kind,
                inverse=info.inverse,
                args=tuple(Value(node=lbl(a.node)) if a.node is not None else Value(literal=a.literal) for a in xu.args),
                mods=tuple(mods), supersedes=tuple(done[r] for r in xu.supersedes), doc=doc, mode=mode,
            )
            unit = probe.model_copy(update={"id": content_unit_id(format_unit(probe, with_id=False))})
            if xu.id:
                done[xu.id] = unit.id
            units.append(unit)
            todo.remove(xu)
            progressed = True
        if not progressed:
            raise ValueError("units refer to each other in a cycle: " + ", ".join(u.id or u.subject for u in todo))
    return units
