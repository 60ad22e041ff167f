"""Two servers on one Neo4j store, each with its own caches: a lifecycle change made through B
reaches A through the change log. A's cached answer that depended on the forgotten document is
recomputed (and no longer finds it); an unrelated cached question is still a hit."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgservice.service import KnowledgeBase
from tests.jobs.conftest import neo4j_over
from tests.pipeline.conftest import ask_params, make_settings

PY, SMOKE = "Who created Python?", "What does smoking cause?"


@pytest.fixture
def pair(tmp_path: Path, neo4j_connection):
    from tests.neo4j_helpers import wipe_all

    wipe_all(neo4j_connection)
    a = KnowledgeBase(make_settings(tmp_path / "a", **neo4j_over()))
    b = KnowledgeBase(make_settings(tmp_path / "b", **neo4j_over()))
    yield a, b
    a.close()
    b.close()


def _ask(kb: KnowledgeBase, q: str):
    from kgservice.pipeline import ask

    return ask(kb, q, params=ask_params())


@pytest.mark.parametrize("how", ["forget", "retract", "replace"])
def test_change_through_b_drops_exactly_a_dependent_cached_answers(pair, how: str) -> None:
    a, b = pair
    b.ingest_document("notes/health.units", "{smoking} [causes] {lung cancer}\n")
    b.ingest_document("notes/python.units", "{Python} [created by] {Guido van Rossum}\n")
    for q in (PY, SMOKE):
        assert _ask(a, q).found
        assert _ask(a, q).llm["calls"] == 0  # cached on A
    if how == "forget":
        b.forget(["notes/python.units"])
    elif how == "retract":
        ids = [u.id for u in b.store.iter_units() if u.subject == "Python"]
        assert ids and b.retract(ids, reason="wrong").retracted == len(ids)
    else:
        b.ingest_document("notes/python.units", "{Python} [created by] {Python Software Foundation}\n")
    assert _ask(a, SMOKE).llm["calls"] == 0  # unrelated: still a hit on A
    after = _ask(a, PY)
    assert "Guido" not in (after.answer or "")
    if how == "replace":
        assert after.found and "Python Software Foundation" in after.answer
    else:
        assert not after.found
