"""The indexes another process keeps of a store (the BM25 unit index, the label index with its
id -> label map, the inverse map of names held in labels) stay equal to a full rebuild when they
follow the store's changes through the change log, on both backends.

A property test: hypothesis draws a sequence of documents ingested, replaced (a fact edited in
place keeps its ``#id``), forgotten, units ingested alone, retracted, nodes relabelled and
changes undone. After each step the long-lived indexes (built once, before the sequence) catch
up from the change log, sometimes after one change and sometimes after several, and are
compared with indexes built afresh from a full scan of the store: the same units and tokens,
the same BM25 scores, the same label tables, the same holders. They must have got there by
patches, never by a rebuild (a rebuild would make the equality trivial).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgservice.config import Settings
from kgservice.entry.match import LabelIndex
from kgservice.entry.step import EntryFinder
from kgservice.errors import InputError
from kgservice.expansion.holders import Holders
from kgservice.answer.floor import stem_counts
from kgservice.answer.shape import stem
from kgservice.expansion.lexical import LexicalUnits, UnitIndex, unit_text
from kgservice.model import NodeKind
from kgservice.service import KnowledgeBase
from kgservice.stores.base import IngestConflict
from tests.neo4j_helpers import wipe_all

# names that hold one another ("Kong" in "Hong Kong" in "British Hong Kong"), share words, or
# carry a qualifier: the label index's keys, bare names and name postings, and the holders
NAMES = ["Hong Kong", "British Hong Kong", "Kong", "New York", "York", "Old York", "Monster Trucks (film)",
         "Pearl Jam", "Seattle", "mild weather", "heavy snowfall", "the city"]
PREDICATES = ["has", "formed in", "near", "performed by"]
QUESTIONS = ["Which city near Hong Kong has heavy snowfall?", "Where was Pearl Jam formed?",
             "What is near York?", "mild weather in the city", "Monster Trucks performed by Kong"]

fact = st.tuples(st.sampled_from(NAMES), st.sampled_from(PREDICATES), st.sampled_from(NAMES))
line = st.tuples(st.integers(1, 8), fact)
step = st.one_of(
    st.tuples(st.just("document"), st.integers(1, 3), st.lists(line, min_size=1, max_size=4)),
    st.tuples(st.just("forget"), st.integers(1, 3)),
    st.tuples(st.just("ingest"), line),
    st.tuples(st.just("retract"), st.integers(1, 8)),
    st.tuples(st.just("relabel"), st.integers(0, 50), st.sampled_from(NAMES)),
    st.tuples(st.just("undo")),
)


def notation(lines: list[tuple[int, tuple[str, str, str]]]) -> str:
    seen: dict[int, str] = {}
    for n, (s, p, o) in lines:
        seen.setdefault(n, f"#u{n} {{{s}}} [{p}] {{{o}}}")
    return "\n".join(seen.values()) + "\n"


def apply(kb: KnowledgeBase, op: tuple) -> None:
    """One step; a step the service refuses (an id another document states, nothing to undo)
    changes nothing, which is a step too."""
    try:
        if op[0] == "document":
            kb.ingest_document(f"d{op[1]}.units", notation(op[2]), embed=False)
        elif op[0] == "forget":
            if any(d.id == f"d{op[1]}.units" for d in kb.documents()):
                kb.forget([f"d{op[1]}.units"])
        elif op[0] == "ingest":
            kb.ingest_notation(notation([op[1]]), doc="loose.units", embed=False)
        elif op[0] == "retract":
            if kb.store.get_units([f"u{op[1]}"]):
                kb.retract([f"u{op[1]}"], "test")
        elif op[0] == "relabel":
            nodes = sorted(n.id for n in kb.store.iter_nodes() if n.kind != NodeKind.LITERAL)
            if nodes:
                kb.store.relabel_nodes({nodes[op[1] % len(nodes)]: op[2]})
        elif op[0] == "undo":
            history = kb.history()
            if history:
                kb.undo(history[-1].id)
    except (InputError, IngestConflict):
        pass


def postings(ix: UnitIndex) -> dict[str, list[tuple[str, float]]]:
    """Token -> (unit id, term frequency), by unit id: rows differ between two indexes of the same units."""
    return {t: sorted((ix.ids[r], float(f)) for r, f in zip(rows, tf)) for t, (rows, tf) in ix.postings.items()}


def assert_equal_to_a_rebuild(kb: KnowledgeBase, lexical: LexicalUnits, finder: EntryFinder) -> None:
    fed = lexical.index()
    built = UnitIndex.build((u.id, unit_text(u)) for u in kb.store.iter_units())
    assert fed.contents() == built.contents()
    assert (fed.n, fed.total) == (built.n, built.total)
    assert postings(fed) == postings(built)
    # the relevance floor's stem counts: derived from the previous index's, word by word, vs counted over a build
    assert dict(fed.derived(stem)) == stem_counts(built.postings)
    for q in QUESTIONS:  # the same scores, to the last bit, and the same order
        assert fed.top(q, 20) == built.top(q, 20)
        assert fed.best_of(q, built.contents()) == built.best_of(q, built.contents())
    nodes = [(n.id, n.label) for n in kb.store.iter_nodes() if n.kind != NodeKind.LITERAL]
    state = finder._derived.get()
    assert dict(state.labels) == dict(nodes)
    assert state.index == LabelIndex.build(sorted(nodes, reverse=True))  # any order builds the same index
    held, again = finder.holders(), Holders.build(LabelIndex.build(nodes), dict(nodes))
    assert (held.held, held.within, held.bytoken) == (again.held, again.within, again.bytoken)


def run(kb: KnowledgeBase, steps: list[tuple], catch_up: list[bool]) -> None:
    kb.ingest_notation("#u0 {Seattle} [has] {heavy snowfall}\n", doc="seed.units", embed=False)
    lexical, finder = LexicalUnits(kb.store), EntryFinder(kb.store)  # another process's indexes
    lexical.index(), finder.holders()
    for op, now in zip(steps, catch_up):
        apply(kb, op)
        if now:  # else the next catch-up replays several changes at once
            assert_equal_to_a_rebuild(kb, lexical, finder)
    assert_equal_to_a_rebuild(kb, lexical, finder)
    assert (lexical._derived.builds, finder._derived.builds) == (1, 1)  # every version reached by a patch


steps_and_catch_up = st.lists(st.tuples(step, st.booleans()), min_size=1, max_size=10)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps_and_catch_up)
def test_embedded_indexes_follow_the_log_to_what_a_rebuild_finds(drawn):
    with tempfile.TemporaryDirectory() as d:
        kb = KnowledgeBase(Settings(data_dir=Path(d) / "kg", embedder="hash:64", vector_backend="edge"))
        try:
            run(kb, [s for s, _ in drawn], [c for _, c in drawn])
        finally:
            kb.close()


def test_neo4j_indexes_follow_the_log_to_what_a_rebuild_finds(neo4j_connection):
    params = {"backend": "neo4j", "neo4j_uri": os.environ["KG_TEST_NEO4J_URI"],
              "neo4j_user": os.environ.get("KG_NEO4J_USER", "neo4j"),
              "neo4j_password": os.environ.get("NEO4J_PASSWORD")}

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(steps_and_catch_up)
    def check(drawn):
        wipe_all(neo4j_connection)
        with tempfile.TemporaryDirectory() as d:
            kb = KnowledgeBase(Settings(data_dir=Path(d) / "kg", embedder="hash:64", vector_backend="edge", **params))
            try:
                run(kb, [s for s, _ in drawn], [c for _, c in drawn])
            finally:
                kb.close()

    check()


def test_a_change_that_lists_no_units_rebuilds_the_unit_index(bare_kb):
    """An ingest is patched in; a change logged without its unit ids (a log written before they
    were listed) cannot be: the unit index is rebuilt, and still finds what the store holds."""
    kb = bare_kb
    kb.ingest_notation("#u1 {Seattle} [has] {heavy snowfall}\n", embed=False)
    lexical = LexicalUnits(kb.store)
    assert [u for u, _ in lexical.index().top("snowfall", 3)] == ["u1"]
    kb.ingest_notation("#u2 {Portland} [has] {snowfall}\n", embed=False)
    assert sorted(u for u, _ in lexical.index().top("snowfall", 3)) == ["u1", "u2"]
    assert (lexical._derived.builds, lexical._derived.patches) == (1, 1)
    kb.ingest_notation("#u3 {Tacoma} [has] {snowfall}\n", embed=False)
    if kb.store.backend == "neo4j":
        from kgservice.stores.changelog import neo4j_change_step

        query, params = neo4j_change_step([], None)  # a change that does not list its units
        with kb.store._session(write=True) as s:
            s.execute_write(lambda tx: tx.run(query, **params).consume())
    else:
        from kgservice.stores.changelog import record_embedded_change

        record_embedded_change(kb.store.dir, [], units=None)
    assert sorted(u for u, _ in lexical.index().top("snowfall", 3)) == ["u1", "u2", "u3"]
    assert (lexical._derived.builds, lexical._derived.patches) == (2, 1)
