"""Invariant 5: every cache entry has an invalidation condition, and ingest fires it."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from kgservice.caches import ANY_INGEST, CACHES, Caches
from kgservice.notation import parse_units
from tests.pipeline.conftest import ask_params


def test_no_entry_without_dependency(tmp_path):
    c = Caches(tmp_path / "c.sqlite3")
    with pytest.raises(ValueError, match="invalidation condition"):
        c.put("decision", "k", {"x": 1}, [])
    with pytest.raises(ValueError, match="unknown cache"):
        c.put("answers", "k", 1, ["x"])
    with pytest.raises(ValueError, match="query vector"):
        c.put("topk", "k", [], ["x"])  # topk entries also need their vector condition


def test_invalidate_drops_exactly_the_dependants(tmp_path):
    c = Caches(tmp_path / "c.sqlite3")
    c.put("key_nodes", "q1", {"v": 1}, ["smoking", "吸烟"])
    c.put("activation", "a1", {"smoking": 1.0}, ["smoking", "lung cancer"])
    c.put("decision", "d1", {"v": 2}, ["lung cancer"])
    c.put("decision", "d2", {"v": 3}, ["python"])
    c.put("key_nodes", "q2", {"v": 4}, [ANY_INGEST])
    assert c.invalidate([]) == 0  # nothing ingested: nothing fires, not even ANY_INGEST
    assert c.invalidate(["lung cancer"]) == 3  # a1, d1, and q2 (any ingest)
    assert c.keys() == [("decision", "d2"), ("key_nodes", "q1")]
    assert c.get("key_nodes", "q1") == {"v": 1}
    stats = c.stats()["caches"]
    assert stats["activation"]["invalidated"] == 1 and stats["decision"]["invalidated"] == 1
    assert stats["key_nodes"]["invalidated"] == 1 and stats["key_nodes"]["hits"] == 1
    c.close()
    again = Caches(tmp_path / "c.sqlite3")  # persisted under the data dir
    assert again.get("decision", "d2") == {"v": 3}
    assert again.clear() == 2 and again.keys() == []


class _Vectors:
    def __init__(self, vecs):
        self.vecs = vecs

    def get_vectors(self, ids):
        return {i: self.vecs[i] for i in ids if i in self.vecs}


def test_topk_entry_is_invalidated_by_a_new_node_within_its_bar(tmp_path):
    e = np.eye(4, dtype=np.float32)
    vectors = _Vectors({"near": e[0], "far": e[1]})
    c = Caches(tmp_path / "c.sqlite3", vectors=lambda: vectors)
    c.put("topk", "t", [["x", 0.9]], ["query", "x"], qvec=e[0], bar=0.8)
    assert c.invalidate(["far"]) == 0  # cosine 0 < bar 0.8: cannot enter the list
    assert c.invalidate(["near"]) == 1  # cosine 1 >= bar: the cached top-k is stale


def test_sync_store_clears_when_store_changed_behind_the_caches(tmp_path):
    state = {"units": 5}
    c = Caches(tmp_path / "c.sqlite3", store_state=lambda: state["units"])
    c.invalidate([])  # records the store state, as an ingest does
    c.put("decision", "d", 1, ["x"])
    assert c.sync_store() is False and c.keys() == [("decision", "d")]
    state["units"] = 6  # another process ingested without invalidating these caches
    assert c.sync_store() is True and c.keys() == []


def _entries(kb):
    return {(cache, key): kb.caches.deps_of(cache, key) for cache, key in kb.caches.keys()}


def test_ingest_invalidates_exactly_the_entries_that_depend_on_the_node(corpus_kb, boundary):
    from kgservice.pipeline import ask

    kb = corpus_kb
    ask(kb, "What does smoking cause?", params=ask_params())  # mode both: 5 entries
    ask(kb, "Who created Python?", params=ask_params())  # directed: key_nodes, topk, judge, answer
    before = _entries(kb)
    per_cache = {c: sum(1 for k in before if k[0] == c) for c in CACHES}
    assert per_cache == {"key_nodes": 2, "topk": 2, "activation": 1, "decision": 4}
    depends_on_python = {k for k, deps in before.items() if "python" in deps}
    # by hand: the Python question's key_nodes + topk entries and its judge + answer decisions
    assert sorted(c for c, _ in depends_on_python) == ["decision", "decision", "key_nodes", "topk"]

    kb.ingest_units(parse_units("{Python} [has] {fancy feature}", kb.lexicon, doc="new.units"))
    after = _entries(kb)
    assert set(before) - set(after) == depends_on_python  # exactly those, nothing else
    assert all("python" not in deps for deps in after.values())

    n = boundary.count
    again = ask(kb, "What does smoking cause?", params=ask_params())
    assert boundary.count == n and again.llm["calls"] == 0  # untouched entries still answer
    py = ask(kb, "Who created Python?", params=ask_params())
    assert py.llm["by_purpose"].keys() == {"key_nodes", "drilldown", "answer"}  # recomputed
    assert py.cited == ["p1"]


def test_direct_store_write_is_replayed_node_by_node(corpus_kb, boundary):
    """A write that bypasses KnowledgeBase.ingest_units (another process, a crash before the
    invalidation) reaches the caches through the store's change log: only the entries that
    depend on the nodes it touched go, an unrelated question still answers from cache."""
    from kgservice.pipeline import ask

    kb = corpus_kb
    ask(kb, "Who created Python?", params=ask_params())
    ask(kb, "What does smoking cause?", params=ask_params())
    kb.store.ingest(parse_units("{cat} [has] {whiskers}", kb.lexicon))  # touches cat, whiskers only
    n = boundary.count
    res = ask(kb, "Who created Python?", params=ask_params())
    assert boundary.count == n and res.llm["calls"] == 0 and res.notes == []
    assert res.caches["key_nodes"] == {"hits": 1, "misses": 0} and res.caches["decision"] == {"hits": 2, "misses": 0}
    # 'whiskers' is a new node with no vector here (the direct write did not embed it), so
    # the replay cannot run the top-k bar check and drops the topk entries: a vector search
    assert res.caches["topk"] == {"hits": 0, "misses": 1}
    # that ask replayed one change and dropped exactly the two topk entries (python, smoking)
    assert (kb.caches.last_sync["replayed"], kb.caches.last_sync["invalidated"]) == (1, 2)
    kb.store.ingest(parse_units("{Python} [has] {fancy feature}", kb.lexicon))  # touches python
    again = ask(kb, "Who created Python?", params=ask_params())
    assert again.llm["by_purpose"].keys() == {"key_nodes", "drilldown", "answer"}  # recomputed
    smoking = ask(kb, "What does smoking cause?", params=ask_params())
    assert smoking.llm["calls"] == 0


def test_change_log_records_each_ingest_with_its_touched_nodes(kb):
    """Version +1 per ingest that stores a unit, none for a no-op re-ingest; touched = every
    node the batch mentions (worked out by hand from the notation)."""
    from kgservice.stores.changelog import attributed, change_feed

    feed = change_feed(kb.store)
    v0 = feed.version()
    with attributed("alice"):
        kb.ingest_units(parse_units("#a1 {cat} [has] {whiskers}\n    ()[colour] (grey)", kb.lexicon))
    kb.ingest_units(parse_units("#a1 {cat} [has] {whiskers}\n    ()[colour] (grey)", kb.lexicon))  # unchanged
    kb.ingest_units(parse_units("#a2 {dog} [is a] {mammal}", kb.lexicon))
    assert feed.version() == v0 + 2
    first, second = feed.since(v0, v0 + 2)
    assert (first.seq, first.by, sorted(first.touched)) == (v0 + 1, "alice", ["cat", "lit:grey", "whiskers"])
    assert (second.seq, second.by, sorted(second.touched)) == (v0 + 2, None, ["dog", "mammal"])


def test_change_log_names_the_ends_of_edges_a_supersession_retires(kb):
    """A superseding unit retires the old unit's edges; their ends are logged although the new
    unit does not mention them (caches and Neo4j's resident spreading graph re-read them)."""
    from kgservice.stores.changelog import change_feed

    feed = change_feed(kb.store)
    kb.ingest_units(parse_units("#r1 {cat} [has] {whiskers}", kb.lexicon))
    v0 = feed.version()
    kb.ingest_units(parse_units("#r2 {cat} [has] {fur}\n    ()[supersedes] #r1", kb.lexicon))
    (change,) = feed.since(v0, v0 + 1)
    assert sorted(change.touched) == ["cat", "fur", "whiskers"]


class _Feed:
    """A change log by hand: version and changes are whatever the test says."""

    def __init__(self):
        from kgservice.stores.changelog import Change

        self.Change = Change
        self.changes: list = []
        self.v = 0

    def add(self, *touched: str, everything: bool = False):
        self.v += 1
        self.changes.append(self.Change(seq=self.v, touched=list(touched), everything=everything))

    def version(self):
        return self.v

    def since(self, after, upto):
        return [c for c in self.changes if after < c.seq <= upto]


def _filled(tmp_path):
    feed = _Feed()
    c = Caches(tmp_path / "c.sqlite3", changes=feed)
    assert c.sync_store() is False  # first sight: records version 0
    c.put("key_nodes", "q1", 1, ["smoking"])
    c.put("decision", "d1", 2, ["python"])
    c.put("decision", "d2", 3, [ANY_INGEST])
    return feed, c


def test_replay_drops_exactly_the_dependants_of_other_processes_changes(tmp_path):
    feed, c = _filled(tmp_path)
    assert c.sync_store() is False and c.last_sync["replayed"] == 0  # version unchanged: no replay
    feed.add("python", "guido")
    feed.add("cat")
    assert c.sync_store() is False
    assert (c.last_sync["replayed"], c.last_sync["invalidated"]) == (2, 2)  # d1 (python) and d2 (any ingest)
    assert c.keys() == [("key_nodes", "q1")]
    c.put("decision", "d3", 4, ["cat"])
    assert c.sync_store() is False and c.keys() == [("decision", "d3"), ("key_nodes", "q1")]  # cat replayed once only
    c.close()
    again = Caches(tmp_path / "c.sqlite3", changes=feed)  # the seen version is stored with the entries
    assert again.sync_store() is False and again.last_sync["replayed"] == 0


class _CountingVectors(_Vectors):
    def __init__(self, vecs):
        super().__init__(vecs)
        self.reads: list[int] = []  # how many ids each read asked for

    def get_vectors(self, ids):
        self.reads.append(len(ids))
        return super().get_vectors(ids)


def test_a_replays_top_k_check_reads_vectors_in_slices_and_stops_once_every_entry_is_dropped(tmp_path):
    # 600 touched nodes, all far from both query vectors except n100 (near t0's) and n550
    # (near t1's); worked out by hand: slices of 256 in sorted order are n000-n255, n256-n511,
    # n512-n599, so t0 alone is settled by the first read, and t0 with t1 needs all three
    e = np.eye(4, dtype=np.float32)
    ids = [f"n{i:03d}" for i in range(600)]
    vecs = {i: e[2] for i in ids} | {"n100": e[0], "n550": e[1]}
    for entries, reads in (({"t0": e[0]}, [256]), ({"t0": e[0], "t1": e[1]}, [256, 256, 88]),
                           ({"t3": e[3]}, [256, 256, 88])):
        feed, vectors = _Feed(), _CountingVectors(vecs)
        c = Caches(None, changes=feed, vectors=lambda v=vectors: v)
        c.sync_store()
        for key, q in entries.items():
            c.put("topk", key, [["x", 0.9]], ["query", "x"], qvec=q, bar=0.8)
        feed.add(*ids)
        c.sync_store()
        assert vectors.reads == reads
        kept = [] if entries.keys() != {"t3"} else [("topk", "t3")]  # nothing near t3's vector
        assert c.keys() == kept


@pytest.mark.parametrize("how", ["pruned", "everything", "reset"])
def test_replay_clears_everything_when_the_log_cannot_say(tmp_path, how):
    feed, c = _filled(tmp_path)
    feed.add("python")
    feed.add("cat", everything=(how == "everything"))
    if how == "pruned":
        feed.changes = feed.changes[1:]  # change 1 is gone: what it touched is unknown
    if how == "reset":
        c.sync_store()
        c.put("decision", "d9", 9, ["dog"])
        feed.v, feed.changes = 0, []  # the store was wiped: version back to 0
    assert c.sync_store() is True and c.keys() == []


def test_an_entry_computed_across_a_change_it_depends_on_is_not_stored(tmp_path):
    feed, c = _filled(tmp_path)
    assert c.sync_store() is False  # this request observed version 0
    feed.add("python")
    other = threading.Thread(target=c.sync_store)  # another request replays the change meanwhile
    other.start()
    other.join()
    c.put("decision", "late-python", 5, ["python"])  # read python before the change: stale
    c.put("decision", "late-cat", 6, ["cat"])  # unaffected by the change
    assert ("decision", "late-python") not in c.keys() and ("decision", "late-cat") in c.keys()


def test_ask_reports_each_round_before_the_answer_and_the_front_replays_them(corpus_kb, boundary):
    """on_round gets every round record as the round ends: the grounded answer's LLM call comes
    after the last one. A repeated question (0 LLM calls) is then kept in the in-memory front
    and served whole, rounds replayed, at the same store version; an ingest drops it."""
    from kgservice.pipeline import ask

    kb = corpus_kb
    at_round: list[int] = []
    got: list[dict] = []
    res = ask(kb, "What does smoking cause?", params=ask_params(),
              on_round=lambda d: (at_round.append(boundary.count), got.append(d)))
    assert got == res.rounds and len(got) >= 1
    assert at_round[-1] < boundary.count  # the answer was computed after the last round was reported
    second = ask(kb, "What does smoking cause?", params=ask_params())
    assert second.llm["calls"] == 0  # from the caches: admitted to the front
    hits0 = kb.caches.session_counts()["decision"]["hits"]
    replayed: list[dict] = []
    third = ask(kb, "What does smoking cause?", params=ask_params(), on_round=replayed.append)
    assert replayed == second.rounds and third.answer == res.answer  # the stored (all-cached) result
    assert kb.caches.session_counts()["decision"]["hits"] == hits0 + second.caches["decision"]["hits"]  # counted
    kb.ingest_units(parse_units("#n9 {smoking} [causes] {stained teeth}", kb.lexicon))
    n = boundary.count
    fourth = ask(kb, "What does smoking cause?", params=ask_params())
    assert boundary.count > n and fourth.llm["calls"] > 0  # the front entry was for the old version


def test_expand_is_cached_at_one_store_version_and_recomputed_after_any_change(corpus_kb, boundary):
    """kb.expand and ops.expand (REST, MCP) keep whole expansions in the in-memory ``expand``
    cache: a repeat at the same store version is a hit (stats count it, no store read); a
    write the caches were not told about (another process's ingest: ``store.ingest`` logs the
    change but does not call ``invalidate``) moves the version and the next call sees it."""
    from kgservice.server import ops
    from kgservice.server.models import ExpandIn

    kb = corpus_kb
    first = kb.expand("Smoking")
    assert "s1" in first.units
    reads = []
    real_reads = kb.store.directed_reads
    kb.store.directed_reads = lambda seeds: reads.append(seeds) or real_reads(seeds)  # type: ignore[method-assign]
    assert kb.expand("Smoking") is first and reads == []  # a hit: no graph read
    spread = kb.expand("smoking", "spread", limit=5)
    assert kb.expand("smoking", "spread", limit=5) is spread
    assert kb.expand("smoking", "spread", limit=5, max_hops=1) is not spread  # every parameter is in the key

    body = ExpandIn(seeds=["Smoking", "python"])
    out = ops.expand(kb, body)
    assert out.cached is False and out.seeds == ["smoking", "python"]
    again = ops.expand(kb, body)
    assert again.cached is True and again.model_dump(exclude={"cached"}) == out.model_dump(exclude={"cached"})
    assert ops.expand_cached(kb, body) is None or ops.expand_cached(kb, body).cached  # peek: a hit or "ask the thread"
    stats = kb.cache_stats()["caches"]["expand"]
    assert stats["in_memory"] and stats["entries"] >= 4
    assert stats["hits"] >= 3 and stats["misses"] == 4 and stats["puts"] == 4
    assert kb.caches.session_counts()["expand"]["misses"] == 4

    (new,) = parse_units("{smoking} [causes] {stained teeth}", kb.lexicon)
    kb.store.ingest([new])  # as another process would: the change log moves, no invalidate() here
    changed = kb.expand("Smoking")
    assert changed is not first and new.id in changed.units and reads  # recomputed from the store
    after = ops.expand(kb, body)
    assert after.cached is False and new.id in {u.id for u in after.units}
    with pytest.raises(ValueError, match="unknown in-memory cache"):
        kb.caches.memo("decision", "k", lambda: 1)


def test_memo_without_a_change_log_never_serves_a_stale_result(tmp_path):
    """No change log (unit-count fallback): no version to stamp with, so nothing is kept."""
    c = Caches(tmp_path / "c.sqlite3", store_state=lambda: 1)
    calls = []
    assert c.memo("expand", "k", lambda: calls.append(1) or len(calls)) == (1, False)
    assert c.memo("expand", "k", lambda: calls.append(1) or len(calls)) == (2, False)
    assert c.stats()["caches"]["expand"]["entries"] == 0
