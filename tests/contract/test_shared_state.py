"""State every server of one store shares, on both backends: saved results and the graphify
community map live in the store (not in a server's data directory), survive a replacing
restore's wipe (saved results) and read back equal on both backends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kgservice.export.graphjson import build_graph_data, shared_communities
from kgservice.graphify.memory import docs_of_records, memory_units, new_saved_result
from kgservice.stores.shared import CommunityMap

CORPUS = """\
#c1 {smoking} [causes] {lung cancer}
#c2 {lung cancer} [causes] {death}
#c3 {tar} [belongs to] {smoking}
#c4 {Python} [created by] {Guido}
#c5 {Guido} [works at] {Microsoft}
"""


def test_saved_results_are_kept_in_order_and_survive_a_wipe(store, ingest):
    assert store.saved_results() == []
    ingest(CORPUS)
    first = new_saved_result("what causes death?", "lung cancer", nodes=["lung cancer", "death"],
                             outcome="useful", contributor="ann")
    second = new_saved_result("who made Python?", "Guido\nvan Rossum", query_type="explain", contributor="bob",
                              correction="Guido van Rossum")
    store.save_result(second.model_copy(update={"date": "2026-01-02T00:00:00+00:00"}))
    store.save_result(first.model_copy(update={"date": "2026-01-01T00:00:00+00:00"}))
    got = store.saved_results()
    assert [r.question for r in got] == ["what causes death?", "who made Python?"]  # oldest first
    assert got[0].source_nodes == ["lung cancer", "death"] and got[0].outcome == "useful"
    assert got[1].answer == "Guido\nvan Rossum" and got[1].correction == "Guido van Rossum" and got[1].outcome is None
    store.wipe()  # kg restore --replace: the knowledge goes, the team's feedback stays
    assert store.counts()["units"] == 0
    assert [r.name for r in store.saved_results()] == [r.name for r in got]


def test_saved_results_feed_back_as_the_same_units_as_memory_files(store, tmp_path):
    from kgservice.graphify.memory import save_result

    file_path = save_result("what causes death?", "lung cancer", tmp_path / "memory", nodes=["death"],
                            contributor="ann")
    rec = new_saved_result("what causes death?", "lung cancer", nodes=["death"], contributor="ann")
    rec = rec.model_copy(update={"name": file_path.name, "date": _date_of(file_path)})
    store.save_result(rec)
    from_file = memory_units(tmp_path / "memory")
    from_store = memory_units(None, docs=docs_of_records(store.saved_results()))
    assert from_store == from_file and from_file[0].startswith("#mem-")
    assert memory_units(tmp_path / "memory", docs=docs_of_records(store.saved_results())) == from_file  # once


def _date_of(path: Path) -> str:
    line = next(x for x in path.read_text("utf-8").splitlines() if x.startswith("date: "))
    return line.split('"')[1]


def test_community_map_round_trip_and_replace(store):
    assert store.community_map() is None
    store.set_community_map(CommunityMap(graph="g1", communities={"a": 0, "b": 1}))
    store.set_community_map(CommunityMap(graph="g2", communities={"a": 1, "é": 0}))
    assert store.community_map() == CommunityMap(graph="g2", communities={"a": 1, "é": 0})


def test_the_stored_communities_are_what_every_reader_of_the_graph_gets(store, ingest):
    ingest(CORPUS)
    data = build_graph_data(store)
    stored = store.community_map()
    assert stored is not None
    assert {n["id"]: n["community"] for n in data["nodes"]} == {nid: stored.communities[nid] for nid in stored.communities
                                                                if any(n["id"] == nid for n in data["nodes"])}
    # another process would read these, not compute its own: plant a different numbering for
    # the same graph and every export follows it
    flipped = {nid: 100 + c for nid, c in stored.communities.items()}
    store.set_community_map(CommunityMap(graph=stored.graph, communities=flipped))
    again = build_graph_data(store)
    assert {n["community"] for n in again["nodes"]} == {100 + c for c in {n["community"] for n in data["nodes"]}}
    # a changed graph is computed afresh and replaces the map
    ingest("#c6 {tea} [contains] {caffeine}\n")
    third = build_graph_data(store)
    assert store.community_map().graph != stored.graph
    assert all(n["community"] < 100 for n in third["nodes"])


def test_a_read_only_reader_computes_without_storing(store, ingest):
    ingest(CORPUS)
    data = build_graph_data(store, store_communities=False)
    assert store.community_map() is None and all(n["community"] is not None for n in data["nodes"])


def test_louvain_numbering_does_not_follow_the_string_hash_seed(tmp_path):
    """The computation itself is stable across processes (other string hash seeds), so the
    first server's stored map is what any other would have computed from the same graph."""
    nodes = [f"n{i:03d}" for i in range(60)]
    edges = [(nodes[i], nodes[(i * 7 + 3) % 60]) for i in range(60)] + [(nodes[i], nodes[i + 1]) for i in range(0, 59, 2)]
    code = ("import json,sys; from kgservice.export.graphjson import louvain; "
            f"print(json.dumps(louvain({nodes!r}, {edges!r}), sort_keys=True))")
    outs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outs.add(done.stdout)
    assert len(outs) == 1
    assert len(set(__import__("json").loads(outs.pop()).values())) > 1  # a real partition, not one blob


def test_shared_communities_ignore_a_map_of_another_graph(store):
    store.set_community_map(CommunityMap(graph="other", communities={"a": 7}))
    got = shared_communities(store, ["a", "b"], [("a", "b")], save=False)
    assert got == {"a": 0, "b": 0} and store.community_map().graph == "other"


def test_entity_resolution_decisions_are_kept_by_pair_and_survive_a_wipe(store):
    """What the model said about a pair of labels lives in the store, so every server of it
    reads it (not in one server's data directory); a replacing restore's wipe keeps it."""
    from kgservice.stores.shared import MergeDecision

    seattle = MergeDecision(a="seattle", b="seattle, washington", same=True, reason="the same city", model="m",
                            decided="2026-12-06T10:00:00+00:00")
    zips = MergeDecision(a="gunzip", b="zip", same=False, reason="a program and a format", model="m",
                         decided="2026-12-06T10:01:00+00:00")
    assert store.merge_decision("seattle", "seattle, washington") is None and store.merge_decisions() == []
    store.record_merge_decision(seattle)
    store.record_merge_decision(zips)
    assert store.merge_decision("seattle", "seattle, washington") == seattle
    assert store.merge_decision("seattle, washington", "seattle") is None  # the caller orders the pair
    store.record_merge_decision(seattle.model_copy(update={"same": False, "reason": "asked again"}))  # replaced
    assert store.merge_decision("seattle", "seattle, washington").reason == "asked again"
    store.wipe()
    assert [(m.a, m.b, m.same) for m in store.merge_decisions()] == [("gunzip", "zip", False),
                                                                     ("seattle", "seattle, washington", False)]
