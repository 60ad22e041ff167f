"""Unit -> notation text; the inverse of the parser (round-trip is property-tested)."""

from __future__ import annotations

from kgservice.model import Unit, Value

_ESCAPE = {"{": "}", "(": ")", "[": "]"}


def _wrap(opener: str, text: str) -> str:
    closer = _ESCAPE[opener]
    body = text.replace("\\", "\\\\").replace(closer, "\\" + closer)
    return f"{opener}{body}{closer}"


def format_value(value: Value) -> str:
    if value.node is not None:
        return _wrap("{", value.node)
    if value.literal is not None:
        return _wrap("(", value.literal)
    return f"#{value.unit}"


def format_unit(unit: Unit, with_id: bool = True) -> str:
    head = [f"#{unit.id}"] if with_id else []
    head += [_wrap("{", unit.subject), _wrap("[", unit.predicate)]
    head += [format_value(a) for a in unit.args]
    lines = [" ".join(head)]
    for mod in unit.mods:
        lines.append(f"    (){_wrap('[', mod.slot)} {format_value(mod.value)}")
    for sup in unit.supersedes:
        lines.append(f"    ()[supersedes] #{sup}")
    return "\n".join(lines)


def format_units(units: list[Unit]) -> str:
    return "\n".join(format_unit(u) for u in units) + ("\n" if units else "")
