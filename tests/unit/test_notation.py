"""Notation parser/serializer: hand-checked examples, exact error positions, round trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgservice.ids import content_unit_id, node_id
from kgservice.model import Mod, Unit, Value
from kgservice.notation import NotationErrors, format_unit, format_units, parse_units
from kgservice.notation.parser import parse_file

DESIGN_EXAMPLE = """\
#u1 {smoking} [causes] {lung cancer}
    ()[confidence] (high)
    ()[source] {WHO report 2023}
#u2 {吸烟} [同义] {smoking}
#u3 {cat} [belongs to] {mammal}
#u4 {mammal} [has] {fur}
#u5 {imagination-augmented agent} [narrows] {agent}
#u6 {Python 3.12} [is latest release of] {Python}
#u7 {Python 3.13} [is latest release of] {Python}
    ()[supersedes] #u6
"""


def test_design_example_parses_to_expected_fields(lexicon):
    units = parse_units(DESIGN_EXAMPLE, lexicon, doc="d.units")
    assert [u.id for u in units] == ["u1", "u2", "u3", "u4", "u5", "u6", "u7"]
    u1 = units[0]
    assert (u1.subject, u1.predicate, u1.family, u1.kind) == ("smoking", "causes", "导致", "content")
    assert u1.args == (Value(node="lung cancer"),)
    assert u1.mods == (Mod(slot="confidence", value=Value(literal="high")), Mod(slot="source", value=Value(node="WHO report 2023")))
    assert (units[1].family, units[1].kind) == ("同义", "synonym")
    assert (units[2].family, units[2].kind) == ("属于", "belongs_to")
    assert (units[3].family, units[3].kind) == ("的", "of")
    assert units[4].kind == "narrows"
    assert units[6].supersedes == ("u6",) and units[6].mods == ()
    assert all(u.doc == "d.units" for u in units)


def test_json_form_has_design_fields(lexicon):
    u = parse_units(DESIGN_EXAMPLE, lexicon)[0]
    data = json.loads(u.model_dump_json())
    for key in ("id", "subject", "predicate", "family", "args", "mods", "supersedes", "doc", "mode", "ingested_at"):
        assert key in data
    assert data["args"] == [{"node": "lung cancer"}]
    assert data["mods"][0] == {"slot": "confidence", "value": {"literal": "high"}}
    assert Unit.model_validate(data) == u


def test_format_is_inverse_of_parse_on_design_example(lexicon):
    assert format_units(parse_units(DESIGN_EXAMPLE, lexicon)) == DESIGN_EXAMPLE


def test_units_without_id_get_a_stable_content_id(lexicon):
    a = parse_units("{cat} [belongs to] {mammal}", lexicon)[0]
    b = parse_units("  \n{cat}   [belongs to]   {mammal}\n", lexicon)[0]
    assert a.id == b.id == content_unit_id("{cat} [belongs to] {mammal}")
    assert a.id != parse_units("{cat} [belongs to] {animal}", lexicon)[0].id


def test_node_ids_normalise_case_width_and_space():
    assert node_id("  Lung   Cancer ") == node_id("lung cancer") == "lung cancer"
    assert node_id("ＧＩＬ") == "gil"  # full-width letters (NFKC)
    assert node_id("Straße") == "strasse"  # case-folding, not lower()


@pytest.mark.parametrize(
    "text, line, col, fragment",
    [
        ("{a} [b]", 1, 8, "expected at least one argument"),
        ("{a} {b} {c}", 1, 5, "expected a predicate"),
        ("#u1 {a} [p] {unclosed", 1, 13, "unclosed '{'"),
        ("#u1 {a} [p] {b}\n    [x] (y)", 2, 5, "expected '()'"),
        ("    ()[x] (y)", 1, 5, "modifier row with no unit above it"),
        ("#u1 {a} [p] {b}\n    ()[supersedes] (u0)", 2, 20, "needs a '#unit' value"),
        ("#u1 {a} [p] {b}\n    ()[w] (1) (2)", 2, 15, "exactly one value"),
        ("#u1 {a} [p] #u2", 1, 13, "only allowed as a modifier value"),
        ("#u1 {a} [p] {b}\n#u1 {a} [p] {c}", 2, 1, "already defined on line 1"),
        ("# {a} [p] {b}", 1, 2, "expected a unit id"),
        ("{a}[p] {b}", 1, 4, "expected a space after"),
        ("{} [p] {b}", 1, 1, "empty {}"),
    ],
)
def test_errors_name_line_column_and_expectation(lexicon, text, line, col, fragment):
    with pytest.raises(NotationErrors) as info:
        parse_units(text, lexicon, source="f.units")
    first = info.value.errors[0]
    assert (first.source, first.line, first.column) == ("f.units", line, col)
    assert fragment in first.message
    assert f"f.units:{line}:{col}:" in str(info.value)


def test_all_errors_in_a_file_are_reported_together(lexicon):
    with pytest.raises(NotationErrors) as info:
        parse_units("{a} [b]\n{ok} [p] {fine}\n{c} {d}\n", lexicon)
    assert [e.line for e in info.value.errors] == [1, 3]


def test_comments_blank_lines_and_bom(lexicon):
    units = parse_units("\ufeff% a comment\n\n{a} [has] {b}\n  % indented comment\n", lexicon)
    assert len(units) == 1


def test_non_utf8_file_reports_line_and_column(tmp_path, lexicon):
    p = tmp_path / "latin1.units"
    p.write_bytes("{a} [has] {b}\n{caf\xe9} [has] {c}\n".encode("latin-1"))
    with pytest.raises(NotationErrors) as info:
        parse_file(p, lexicon)
    e = info.value.errors[0]
    assert (e.line, e.column) == (2, 5) and "not valid UTF-8" in e.message


def test_escapes_allow_closers_inside_labels(lexicon):
    u = parse_units(r"{f\}x} [p\]q] (a\)b) {back\\slash}", lexicon)[0]
    assert (u.subject, u.predicate) == ("f}x", "p]q")
    assert u.args == (Value(literal="a)b"), Value(node="back\\slash"))
    assert parse_units(format_unit(u), lexicon)[0] == u


# -- property: serialise -> parse is the identity on any unit ---------------------------
_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x85\u2028\u2029"),
    min_size=1, max_size=20,
).map(str.strip).filter(bool)
_ident = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.:\-]{0,10}", fullmatch=True)
_value = st.one_of(st.builds(Value, node=_text), st.builds(Value, literal=_text))
_mod = st.builds(Mod, slot=_text.filter(lambda s: s.casefold() not in ("supersedes", "取代", "replaces")),
                 value=st.one_of(_value, st.builds(Value, unit=_ident)))


@st.composite
def _units(draw):
    from kgservice.families import Lexicon

    pred = draw(_text)
    args = tuple(draw(st.lists(_value, min_size=1, max_size=3)))
    info = Lexicon.load().resolve(pred, object_is_literal=args[0].literal is not None)  # as the parser does
    return Unit(id=draw(_ident), subject=draw(_text), predicate=pred, family=info.base, kind=info.kind,
                inverse=info.inverse, args=args,
                mods=tuple(draw(st.lists(_mod, max_size=3))), supersedes=tuple(draw(st.lists(_ident, max_size=2))))


@settings(max_examples=300, deadline=None)
@given(_units())
def test_round_trip_property(lexicon, unit):
    text = format_unit(unit)
    [back] = parse_units(text, lexicon)
    assert back == unit
    assert format_unit(back) == text
    assert Unit.model_validate_json(unit.model_dump_json()) == unit
