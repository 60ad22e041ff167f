"""The no-model answer reads the facts of a type a named thing belongs to as facts about the
thing (DESIGN's belongs-to closure: facts on a super-class sink to its members;
:func:`kgservice.answer.retrieval_only.inherited_units`). The demo's "What methods and
operations does a list get from the types it belongs to?" in small, on both graph backends.

Before: the answer listed the units about the member itself (*Zorp [is a] widget kind*, *Zorp
[has] blue paint*, *Zorp [made in] Oslo*) and ranked the type's facts below them, anchored on
nothing the question names.
"""

from __future__ import annotations

from kgservice.answer.retrieval_only import answer_units, inherited_units

UNITS = """#w1 {Zorp} [is a] {widget kind}
#w2 {widget kind} [subclass of] {gadget kind}
#w3 {widget kind} [has] {spin method}
#w4 {gadget kind} [has] {reset method}
#w5 {Zorp} [has] {blue paint}
#w6 {Zorp} [made in] {Oslo}
#w7 {Blip} [is a] {widget kind}
#w8 {Blip} [has] {stop method}
"""
QUESTION = "Which methods does Zorp get from the kinds it belongs to?"


def test_a_types_facts_answer_what_its_member_gets(bare_kb) -> None:
    from kgservice.notation import parse_units

    bare_kb.ingest_units(parse_units(UNITS, bare_kb.lexicon))
    got = answer_units(bare_kb, QUESTION)
    assert got.relevance.found
    assert "w3" in [u.id for u in got.units], [u.id for u in got.units]  # widget kind [has] spin method
    ranked = [m.id for m in got.matches]
    # both types' facts rank above the closure's edge and the sibling's (Blip's) fact, which is not Zorp's
    assert max(ranked.index("w3"), ranked.index("w4")) < min(ranked.index("w2"), ranked.index("w8")), ranked
    # the type's side anchors the unit as the named thing does; the closure's own edge is not inherited
    assert got.candidates["w3"].inherited_sides == frozenset({0})
    assert got.candidates["w4"].inherited_sides == frozenset({0})
    assert got.candidates["w2"].inherited_sides == frozenset()


def test_inherited_units_nearest_type_first_and_bounded(bare_kb) -> None:
    from kgservice.notation import parse_units

    bare_kb.ingest_units(parse_units(UNITS, bare_kb.lexicon))
    named = bare_kb.retrieve(QUESTION).entry.named
    assert len(named) == 1  # Zorp
    # depth 1 (widget kind) before depth 2 (gadget kind); the belongs-to edge w2 and Blip's w8 are not Zorp's facts
    assert inherited_units(bare_kb.store, named) == {"w3": named_type(bare_kb, "widget kind"),
                                                      "w4": named_type(bare_kb, "gadget kind")}
    assert list(inherited_units(bare_kb.store, named, limit=1)) == ["w3"]
    # a type the question names itself lends nothing: its units are the question's own
    assert list(inherited_units(bare_kb.store, named + [named_type(bare_kb, "widget kind")])) == ["w4"]


def named_type(kb, label: str) -> str:
    """The node id the entry step reads a label as."""
    (node,) = kb.retrieve(label).entry.named
    return node


def test_a_superseded_fact_of_a_type_is_not_inherited(bare_kb) -> None:
    """A type's fact that a later unit superseded is not the type's any more: the directed
    expansion reads the chain's end (:meth:`superseded_end`), and so does the answer's
    inheritance (before: *widget kind [has] spin method* joined the pool after *... [has] turn
    method* superseded it, and was inherited as Zorp's)."""
    from kgservice.notation import parse_units

    bare_kb.ingest_units(parse_units(UNITS, bare_kb.lexicon))
    bare_kb.ingest_units(parse_units("#w9 {widget kind} [has] {turn method}\n    ()[supersedes] #w3\n",
                                     bare_kb.lexicon))
    named = bare_kb.retrieve(QUESTION).entry.named
    got = inherited_units(bare_kb.store, named)
    assert "w3" not in got and got.get("w9") == named_type(bare_kb, "widget kind"), got
    assert "w3" not in {u.id for u in answer_units(bare_kb, QUESTION).units}


def test_a_superseded_fact_of_a_narrower_kind_does_not_join_the_pool(bare_kb) -> None:
    """The same for :func:`narrower_units`: a narrower kind's fact that a later unit superseded
    does not join the no-model answer's pool (before: *free-threaded CPython [has] no GIL*
    joined it after *… [has] per-object locks* superseded it)."""
    from kgservice.answer.retrieval_only import narrower_units
    from kgservice.notation import parse_units

    bare_kb.ingest_units(parse_units("#n1 {free-threaded CPython} [narrows] {CPython}\n"
                                     "#n2 {free-threaded CPython} [has] {no GIL}\n"
                                     "#n0 {CPython} [is a] {Python implementation}\n", bare_kb.lexicon))
    bare_kb.ingest_units(parse_units("#n3 {free-threaded CPython} [has] {per-object locks}\n    ()[supersedes] #n2\n",
                                     bare_kb.lexicon))
    got = narrower_units(bare_kb.store, [named_type(bare_kb, "CPython")], set())
    assert "n3" in got and "n2" not in got, got
