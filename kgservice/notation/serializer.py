"""Unit -> notation text; the inverse of the parser (round-trip is property-tested)."""

from __future__ import annotations

from kgservice.model import Unit, Value

_ESCAPE = {"{": "}", "(": ")", "[": "]"}


def _wrap(opener: str, text: str, escape: bool = True) -> str:
    closer = _ESCAPE[opener]
    body = text.replace("\\", "\\\\").replace(closer, "\\" + closer) if escape else text
    return f"{opener}{body}{closer}"


def format_value(value: Value, escape: bool = True) -> str:
    if value.node is not None:
        return _wrap("{", value.node, escape)
    if value.literal is not None:
        return _wrap("(", value.literal, escape)
    return f"#{value.unit}"


def format_unit(unit: Unit, with_id: bool = True, escape: bool = True) -> str:
    """The unit in notation: the inverse of :func:`kgservice.notation.parse_units`.
    ``escape=False`` leaves closing brackets inside values as they are: text for a reader (a
    model's prompt), who needs no parser's escapes ("(6.8 inches (17.3 cm))"), not for parsing.

    Examples
    --------
    >>> from kgservice.families import Lexicon
    >>> from kgservice.notation import parse_units
    >>> text = "#u1 {smoking} [causes] {lung cancer}\\n    ()[confidence] (high)\\n    ()[source] {WHO}"
    >>> [unit] = parse_units(text, Lexicon.load())
    >>> format_unit(unit) == text
    True
    >>> format_unit(unit, with_id=False).splitlines()[0]
    '{smoking} [causes] {lung cancer}'

    Closing brackets inside a label are escaped, and come back unchanged:

    >>> [odd] = parse_units(r"{a\\}b} [returns] (a \\) b)", Lexicon.load())
    >>> odd.subject, odd.args[0].literal
    ('a}b', 'a ) b')
    >>> format_unit(odd, with_id=False)
    '{a\\\\}b} [returns] (a \\\\) b)'
    >>> format_unit(odd, with_id=False, escape=False)
    '{a}b} [returns] (a ) b)'
    """
    head = [f"#{unit.id}"] if with_id else []
    head += [_wrap("{", unit.subject, escape), _wrap("[", unit.predicate, escape)]
    head += [format_value(a, escape) for a in unit.args]
    lines = [" ".join(head)]
    for mod in unit.mods:
        lines.append(f"    (){_wrap('[', mod.slot, escape)} {format_value(mod.value, escape)}")
    for sup in unit.supersedes:
        lines.append(f"    ()[supersedes] #{sup}")
    return "\n".join(lines)


def format_units(units: list[Unit]) -> str:
    return "\n".join(format_unit(u) for u in units) + ("\n" if units else "")
