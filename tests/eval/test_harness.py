"""The eval harness (scripts/eval/): structure and recall arithmetic on a tiny hand-made set
whose answers are worked out by hand, plus a smoke run on a 20-question MuSiQue slice (no
thresholds: the numbers are the eval's, not the tests')."""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgservice.families import Lexicon
from scripts.eval import defaults_rule, metrics, paired
from scripts.eval.dataset import MUSIQUE_DIR, DatasetError, build_units, load, load_musique
from scripts.eval.harness import build, evaluate, format_table, ordered

TINY = Path(__file__).with_name("tiny.json")
ROOT = Path(__file__).resolve().parents[2]


def test_metrics_doctests():
    assert doctest.testmod(metrics).failed == 0


def test_defaults_rule(tmp_path, capsys):
    """The rule check over two sets: a default that loses by more than a point on one set is
    flagged; bad files exit 2 with the file named."""
    assert doctest.testmod(defaults_rule).failed == 0
    full = {"R@2": 50.0, "R@5": 60.0}
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps({"set": "a", "table": {defaults_rule.FULL: full, "ablation: x": {"R@2": 50.0, "R@5": 61.5},
                                                    "ablation: y": {"R@2": 48.5, "R@5": 61.5}}}))
    b.write_text(json.dumps({"set": "b", "table": {defaults_rule.FULL: full, "ablation: x": {"R@2": 49.0, "R@5": 60.0},
                                                    "ablation: y": {"R@2": 50.0, "R@5": 60.0}}}))
    assert defaults_rule.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    # x: 1.5 better on a's R@5, at most a point worse anywhere -> it should replace the default
    assert "| x | +0.00 / +1.50 | -1.00 / +0.00 | **no** |" in out
    # y: as much better, but 1.5 worse on a's R@2 -> a trade the rule cannot decide
    assert "| y | -1.50 / +1.50 | +0.00 / +0.00 | trade |" in out
    assert "1 default(s) lose to an alternative by the rule; 1 trade(s)" in out
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert defaults_rule.main([str(a), str(bad)]) == 2
    assert "bad.json: no full-retrieval row" in capsys.readouterr().err


def test_paired(tmp_path, capsys):
    """The question-by-question comparison: splits worked out by hand, the sign test's tail
    by hand (2 x (1 + 3) / 2^3 = 1.0 for 2 against 1; 2 / 2^3 = 0.25 for 3 against 0), bad
    files exit 2 with the file named."""
    assert doctest.testmod(paired).failed == 0
    full, ppr = defaults_rule.FULL, paired.PPR

    def q(kind, a, b):
        return {"type": kind, "gold": ["g1", "g2"], "rankings": {full: a, ppr: b}}

    qs = [q("bridge", ["g1", "g2"], ["x", "g1"]), q("bridge", ["g1", "x"], ["g1", "x"]),
          q("bridge", ["x", "y", "g1"], ["g1", "x"]), q("3-hop", ["g1", "g2"], ["x", "y", "z", "w", "v"])]
    assert paired.split(qs, full, ppr, 2) == (2, 1, 1)
    assert paired.split(qs, full, ppr, 5) == (2, 2, 0)
    assert paired.sign_test(2, 1) == 1.0 and paired.sign_test(3, 0) == 0.25
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"set": "s", "per_question": qs}))
    assert paired.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "| s | bridge | 3 | 1 / 1 / 1 (p 1.00) | 1 / 2 / 0 (p 1.00) |" in out
    assert "| s | all | 4 | 2 / 1 / 1 (p 1.00) | 2 / 2 / 0 (p 0.50) |" in out
    assert paired.main([str(path), "--b", "no such method"]) == 2
    assert "s.json: no per-question rankings for 'no such method'" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    assert paired.main([str(bad)]) == 2
    assert "bad.json: cannot read an eval result" in capsys.readouterr().err
    # run as the README writes it, from another folder and with no PYTHONPATH: it finds its package
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "eval" / "paired.py"), str(path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "| s | all | 4 | 2 / 1 / 1 (p 1.00) |" in done.stdout


def test_run_names_missing_or_malformed_data(tmp_path, capsys):
    """A missing MuSiQue folder or a file not in the eval shape: exit 2 naming the file and
    where the folder comes from, not a traceback."""
    from scripts.eval import run

    assert run.main(["--musique", str(tmp_path / "nowhere"), "--limit", "2"]) == 2
    err = capsys.readouterr().err
    assert f"no such file: {tmp_path / 'nowhere' / 'musique_train.json'}" in err and "KG_EVAL_MUSIQUE" in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"passages": []}')
    assert run.main(["--data", str(bad)]) == 2
    assert f"{bad}: not the eval shape" in capsys.readouterr().err
    bad.write_text("{")
    assert run.main(["--data", str(bad)]) == 2
    assert f"{bad}: Expecting property name" in capsys.readouterr().err


def test_recall_by_hand():
    gold = {"q1": ["p1", "p2"], "q2": ["p3"]}
    runs = {"q1": ["p4", "p1", "p3", "p2"], "q2": ["p3"]}
    # q1: top-2 {p4, p1} holds 1 of 2 gold; top-5 holds both. q2: p3 first.
    assert metrics.mean_recall(runs, gold, 2) == pytest.approx(100 * (0.5 + 1.0) / 2)
    assert metrics.mean_recall(runs, gold, 5) == pytest.approx(100.0)
    assert metrics.mean_recall({"q2": ["p3"]}, gold, 5) == pytest.approx(50.0)  # a missing run scores 0
    with pytest.raises(ValueError):
        metrics.recall_at(["a"], [], 2)


def test_dataset_shape_and_units():
    ds = load(TINY)
    assert [p.id for p in ds.passages] == ["p1", "p2", "p3", "p4"]
    assert ds.questions[1].hop_count == 1 and ds.questions[0].hop_count == 2
    units, origin, skipped = build_units(ds, Lexicon.load())
    assert skipped == 2  # ["bad triple"] and the empty subject
    assert origin == {"p1.t0": "p1", "p1.t1": "p1", "p2.t0": "p2", "p3.t0": "p3", "p4.t0": "p4", "p4.t1": "p4"}
    assert {u.id: u.doc for u in units} == origin
    assert next(u for u in units if u.id == "p1.t1").kind == "belongs_to"  # "is a" resolves through the lexicon


def test_dataset_errors(tmp_path):
    bad = json.loads(TINY.read_text())
    bad["questions"][0]["gold"] = ["p9"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(DatasetError, match="q1 has gold passages that are not passages"):
        load(path)
    path.write_text(json.dumps({"passages": []}))
    with pytest.raises(DatasetError, match="not the eval shape"):
        load(path)


def test_duplicate_triples_map_to_every_passage(tiny_ctx):
    # p4.t1 restates p1.t0: merged at ingest, and the stored unit maps back to both passages
    assert tiny_ctx.build_info["duplicates"] == 1
    assert tiny_ctx.unit_passages["p1.t0"] == ["p1", "p4"]
    assert "p4.t1" not in tiny_ctx.unit_passages
    assert tiny_ctx.passage_nodes["p4"] == {"cheese", "milk", "hello love", "hank snow"}


def test_methods_rank_by_hand(tiny_ctx):
    from scripts.eval import methods as M

    seeds = tiny_ctx.finder.find("Where did the performer of Hello Love live?").seeds
    assert seeds == {"hello love": 1.0}  # the only name written like one; "performer" and "live" are no nodes
    # spreading from hello love (DESIGN defaults, K = 3): hop 1 content -> hank snow .3, belongs_to ->
    # song .7; hop 2 hank snow -> nashville .09, song -> hello love .49 (backflow); hop 3 nashville ->
    # tennessee .027, hello love -> hank snow .147, song .343. Energies: hello love 1.49, hank snow .447,
    # song 1.043, nashville .09, tennessee .027. Passages sum their nodes: p1 hello love + hank snow +
    # song; p4 (cheese, milk: 0) + hello love + hank snow (the merged duplicate); p2 hank snow +
    # nashville; p3 nashville + tennessee
    scores = M.spread(tiny_ctx, "q1", seeds)
    assert scores == pytest.approx({"p1": 1.49 + 0.447 + 1.043, "p4": 1.49 + 0.447, "p2": 0.447 + 0.09,
                                    "p3": 0.09 + 0.027})
    assert ordered(scores) == ["p1", "p4", "p2", "p3"]
    # directed expansion of hello love: its subject units p1.t0 (p1, p4) and p1.t1 (p1)
    assert ordered(M.directed(tiny_ctx, "q1", seeds)) == ["p1", "p4"]
    # PPR: the seed's own passages lead
    assert ordered(M.ppr(tiny_ctx, "q1", seeds))[:2] == ["p1", "p4"]


def test_numpy_pagerank_matches_networkx(tiny_ctx):
    import networkx as nx

    from scripts.eval.methods import _graph, pagerank

    g = _graph(tiny_ctx)
    pers = {"hello love": 1.0, "nashville": 0.5}
    ours = pagerank(g, pers, alpha=0.5, tol=1e-12)
    ref = nx.pagerank(g, alpha=0.5, personalization=pers, weight="weight", tol=1e-12) if _has_scipy() else \
        nx.algorithms.link_analysis.pagerank_alg._pagerank_python(g, alpha=0.5, personalization=pers, weight="weight",
                                                                  tol=1e-12)
    assert ours == pytest.approx(ref, abs=1e-8)


def _has_scipy() -> bool:
    try:
        import scipy  # noqa: F401
    except ImportError:
        return False
    return True


def test_table_structure(tiny_ctx):
    runs = {"perfect": {"q1": ["p1", "p2"], "q2": ["p3"]}, "empty": {}}
    table = evaluate(tiny_ctx, runs)
    assert table["perfect"]["R@2"] == 100.0 and table["empty"]["R@5"] == 0.0
    assert table["perfect"]["hops"] == {1: {"n": 1, "R@2": 100.0, "R@5": 100.0}, 2: {"n": 1, "R@2": 100.0, "R@5": 100.0}}
    text = format_table(table)
    assert text.splitlines()[0].startswith("| method | R@2 | R@5 | 1-hop")
    assert "| perfect | 100.0 | 100.0 |" in text


@pytest.mark.skipif(not MUSIQUE_DIR.exists() and os.environ.get("CI") != "true",
                    reason=f"MuSiQue slice not present at {MUSIQUE_DIR} (CI requires it: ../shared beside the clone)")
def test_musique_slice_smoke(tmp_path):
    """20 questions on the passages they list, hash embedder: every method yields a complete,
    well-formed table (values in range, one run per question); no thresholds."""
    from scripts.eval.run import run, seeds_for, standard_methods

    ds = load_musique(limit=20, slice_corpus=True)
    assert len(ds.questions) == 20 and all(q.gold for q in ds.questions)
    assert {g for q in ds.questions for g in q.gold} <= {p.id for p in ds.passages}
    ctx = build(ds, "hash:64", workdir=tmp_path, log=lambda m: None)
    try:
        runs, lat = run(ctx, standard_methods(), seeds_for(ctx))
        table = evaluate(ctx, runs)
        for method, row in table.items():
            assert 0.0 <= row["R@2"] <= row["R@5"] <= 100.0, method
            assert sum(h["n"] for h in row["hops"].values()) == 20
            assert len(runs[method]) == 20 and len(lat[method]) == 20
    finally:
        ctx.kb.close()


def test_subset_of_a_generic_set_and_string_hop_ids():
    from scripts.eval import dataset

    assert doctest.testmod(dataset).failed == 0
    ds = dataset.subset(load(TINY), limit=1, slice_corpus=True)
    assert [q.id for q in ds.questions] == ["q1"] and ds.name == "tiny-1q-sliced"
    assert {p.id for p in ds.passages} == set(ds.questions[0].gold)
    assert dataset.subset(load(TINY)).name == "tiny" and len(dataset.subset(load(TINY)).passages) == 4


def test_json_report_lists_rankings_and_coverage(tiny_ctx):
    from scripts.eval.run import report, seeds_for

    seeds = seeds_for(tiny_ctx)
    runs = {"perfect": {"q1": ["p1", "p2"], "q2": ["p3"]}}
    doc = report(tiny_ctx, evaluate(tiny_ctx, runs), runs, seeds, seeds_for(tiny_ctx, names_only=True), {})
    assert [q["rankings"]["perfect"] for q in doc["per_question"]] == [["p1", "p2"], ["p3"]]
    cov = doc["entry_coverage"]
    assert cov["gold"] == 3 and cov["gold_without_entry"] == sum(len(q["gold_without_entry"]) for q in doc["per_question"])
    json.dumps(doc)


def test_ablation_swaps_the_retrievals_spread_params_for_the_call_only(tiny_ctx, monkeypatch):
    """The backflow and ε rows change the spreading the retrieval runs, and only for the call.
    (They swapped ``kb.spread_params``, which the retrieval stopped reading when it took its
    parameters from the parts: every such row measured the shipped retrieval.)"""
    import kgservice.expansion.retrieve as retrieval
    from scripts.eval import methods as M
    from scripts.eval.run import with_spread

    seen = []
    real = retrieval.spread_activation

    def spy(store, seeds, params):
        seen.append(params)
        return real(store, seeds, params)
    monkeypatch.setattr(retrieval, "spread_activation", spy)
    qid = tiny_ctx.ds.questions[0].id
    with_spread(M.project, seed_backflow=True, epsilon=0.07)(tiny_ctx, qid, {})
    assert seen and all(p.seed_backflow is True and p.epsilon == 0.07 for p in seen)
    seen.clear()
    M.project(tiny_ctx, qid, {})
    # the lexicon's spreading: no seed backflow; the settings' ε
    assert seen and all(p.seed_backflow is False and p.epsilon == 0.05 for p in seen)


def test_cache_keys_follow_content():
    """The ingest is keyed by what the graph is built from (passage ids and triples, not the
    question limit); passage vectors by the passages' text alone, so a set that only changes
    the triples reuses them and a set that changes the text does not."""
    import copy

    from scripts.eval import harness
    from scripts.eval.dataset import subset

    assert doctest.testmod(harness).failed == 0
    ds = load(TINY)
    assert harness._fingerprint(subset(ds, limit=1), "hash:64") == harness._fingerprint(ds, "hash:64")
    assert harness._fingerprint(subset(ds, limit=1, slice_corpus=True), "hash:64") != harness._fingerprint(ds, "hash:64")
    other = copy.deepcopy(ds)
    other.passages[0].triples = [["Somebody", "founded", "Something"]]
    assert harness._fingerprint(other, "hash:64") != harness._fingerprint(ds, "hash:64")
    assert harness._passage_vectors_path(other, "hash:64") == harness._passage_vectors_path(ds, "hash:64")
    other.passages[0].text += " more"
    assert harness._passage_vectors_path(other, "hash:64") != harness._passage_vectors_path(ds, "hash:64")
    assert harness._fingerprint(ds, "hash:64") != harness._fingerprint(ds, "default")


def test_cache_key_follows_the_families(monkeypatch):
    """A store built before the lexicon gave a predicate another family is not reused: the
    families decide the stored graph (the copula read as class membership changed MuSiQue's
    spreading), and the cache keyed by triples alone served the old graph to new code."""
    from scripts.eval import harness

    ds = load(TINY)
    before = harness._fingerprint(ds, "hash:64")
    assert harness._fingerprint(ds, "hash:64") == before  # the same lexicon, the same key

    load_real = Lexicon.load

    def load_lexicon(*_, **__):  # the shipped lexicon with one predicate moved to another family
        lex = load_real()
        lex.merge({"kinds": {"belongs_to": {"members": ["lived in"]}}}, "test")
        return lex

    assert load_real().resolve("lived in").kind == "content" and load_lexicon().resolve("lived in").kind == "belongs_to"
    monkeypatch.setattr(Lexicon, "load", staticmethod(load_lexicon))
    assert harness._fingerprint(ds, "hash:64") != before


def test_miss_reasons_on_the_tiny_set(tiny_ctx):
    """Every gold passage lands in exactly one class, and the table's totals add up."""
    from scripts.eval.run import format_misses, miss_reasons

    misses = miss_reasons(tiny_ctx)
    assert sum(misses["all"].values()) == sum(len(q.gold) for q in tiny_ctx.ds.questions)
    assert sum(sum(v.values()) for k, v in misses.items() if k != "all") == sum(misses["all"].values())
    assert format_misses(misses).count("\n") == len(misses) + 1


def _hotpot_dir(tmp_path: Path) -> Path:
    """Two questions in the shape of HippoRAG's HotpotQA slice (``legacy`` branch): the corpus
    maps a title to its sentences, a question lists its supporting facts by title."""
    corpus = {"Alpha Band": ["Alpha Band is a rock band.", " It was formed in Leeds."],
              "Leeds": ["Leeds is a city in Yorkshire."],
              "Beta Group": ["Beta Group is a pop group."]}
    qs = [{"_id": "5a1", "type": "bridge", "question": "Which county holds the city where Alpha Band formed?",
           "supporting_facts": [["Alpha Band", 1], ["Leeds", 0], ["Alpha Band", 0]],
           "context": [["Alpha Band", corpus["Alpha Band"]], ["Leeds", corpus["Leeds"]]]},
          {"_id": "5a2", "type": "comparison", "question": "Are Alpha Band and Beta Group both bands?",
           "supporting_facts": [["Alpha Band", 0], ["Beta Group", 0]],
           "context": [["Beta Group", corpus["Beta Group"]], ["Alpha Band", corpus["Alpha Band"]]]}]
    (tmp_path / "hotpotqa_train.json").write_text(json.dumps(qs))
    (tmp_path / "hotpotqa_train_corpus.json").write_text(json.dumps(corpus))
    return tmp_path


def test_spacy_triples_pure_parts():
    """The spaCy OpenIE's parse-free parts (which name is the passage's title); the parse
    itself needs spaCy, which is not a test dependency (scripts/eval/README.md)."""
    from scripts.eval import spacy_triples

    result = doctest.testmod(spacy_triples)
    assert result.attempted >= 2 and result.failed == 0
    assert spacy_triples._topic("Trent Reznor", "Trent Reznor (musician)") == "Trent Reznor"
    assert spacy_triples._topic("Los Angeles", "Trent Reznor") == "Los Angeles"


def test_hotpotqa_loader_keeps_types_and_titles_as_gold(tmp_path):
    from scripts.eval.dataset import load_hotpotqa

    ds = load_hotpotqa(_hotpot_dir(tmp_path))
    assert [p.id for p in ds.passages] == ["h0000", "h0001", "h0002"]
    assert ds.passages[0].text == "Alpha Band is a rock band. It was formed in Leeds."
    bridge, comparison = ds.questions
    # a title supporting twice is one gold passage; the types are HotpotQA's own, two hops each
    assert bridge.gold == ["h0000", "h0001"] and bridge.kind == "bridge" and bridge.hop_count == 2
    assert comparison.gold == ["h0000", "h0002"] and comparison.kind == "comparison"
    assert comparison.candidates == ["h0002", "h0000"]
    assert [q.id for q in load_hotpotqa(tmp_path, limit=1, slice_corpus=True).questions] == ["5a1"]
    assert [p.id for p in load_hotpotqa(tmp_path, limit=1, slice_corpus=True).passages] == ["h0000", "h0001"]


def test_dataset_cli_writes_the_generic_shape(tmp_path, capsys):
    from scripts.eval import dataset

    out = tmp_path / "out" / "hotpotqa.json"
    assert dataset.main(["hotpotqa", "--dir", str(_hotpot_dir(tmp_path)), "--out", str(out)]) == 0
    ds = load(out)  # what run.py --data and spacy_triples.py read
    assert ds.name == "hotpotqa" and len(ds.passages) == 3 and ds.questions[1].kind == "comparison"
    assert dataset.main(["hotpotqa", "--dir", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert "nowhere" in capsys.readouterr().err


def test_passage_scorings_read_the_retrievals_own_scores_and_put_it_back(tiny_ctx):
    """The passage-scoring rows wrap the retrieval's ``unit_scores`` for the call: counting a
    node's repeats to the power 1 must give exactly the units' sums of the shipped row (a
    second computation of the same figure: ties included), and the function is restored."""
    import kgservice.expansion.retrieve as retrieval
    from scripts.eval import methods as M
    from scripts.eval.run import project_capped, project_repeat_damped

    real = retrieval.unit_scores
    for q in tiny_ctx.ds.questions:
        shipped = M.project(tiny_ctx, q.id, {})
        assert project_repeat_damped(tiny_ctx, q.id, {}, 1.0) == shipped
        # with no node-vector fusion every unit is the graph's, so nothing is capped
        assert project_capped(tiny_ctx, q.id, {}, dense_weight=0.0) == M.project(tiny_ctx, q.id, {}, dense_weight=0.0)
        # counting each node once can only lower a passage's score
        once = project_repeat_damped(tiny_ctx, q.id, {}, 0.0)
        assert set(once) == set(shipped) and all(once[p] <= shipped[p] + 1e-6 for p in once)
    assert retrieval.unit_scores is real


def test_a_cached_build_left_owing_vectors_is_repaired_before_use(tmp_path):
    """Two builds of one cache directory at once can leave the marker written and the node
    vectors owed (the one that wrote the graph failed on the vector store the other held); the
    harness must pay them before measuring, or every vector-fed row runs on an empty index."""
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase
    from kgservice.vectors.owed import OwedVectors

    good = build(load(TINY), "hash:64", workdir=tmp_path / "good", log=lambda m: None)
    nodes = good.kb.store.counts()["nodes"]
    assert good.kb.vectors.count() == nodes > 0
    good.kb.close()
    # the raced state, made by hand: the graph written without its vectors, a failed writer's
    # note, and the other racer's marker
    raced = tmp_path / "raced"
    kb = KnowledgeBase(Settings(data_dir=raced / "kg", embedder="hash:64", vector_backend="edge"))
    units, _, _ = build_units(load(TINY), kb.lexicon)
    notes = OwedVectors(raced / "kg")
    note = notes.begin()
    kb.ingest_units(units, embed=False)
    notes.end(note, failed=True)
    assert kb.vectors.count() == 0
    kb.close()
    (raced / "built.json").write_text((tmp_path / "good" / "built.json").read_text())
    said: list[str] = []
    ctx = build(load(TINY), "hash:64", workdir=raced, log=said.append)
    assert ctx.kb.vectors.count() == nodes
    assert said[0] == f"embedded {nodes} node vectors an earlier build of {raced} owed"
    ctx.kb.close()


def test_a_second_build_of_one_cache_directory_waits_for_the_first(tmp_path):
    """While one process holds a cache directory's build, another one's build must not touch
    it: a child process holds the lock (as a build in progress does); our build may not write
    the marker until the child lets go, and then finds the directory to build in."""
    work = tmp_path / "tiny"
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom pathlib import Path\nfrom scripts.eval.harness import building\n"
         "with building(Path(sys.argv[1])):\n    print('held', flush=True)\n    sys.stdin.readline()\n", str(work)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert child.stdout.readline().strip() == "held"
        import threading
        done: list[object] = []
        t = threading.Thread(target=lambda: done.append(build(load(TINY), "hash:64", workdir=work, log=lambda m: None)))
        t.start()
        t.join(timeout=3)
        # however slow the machine, a build that respects the lock has written nothing yet
        assert not (work / "built.json").exists() and not done
        child.stdin.write("\n")
        child.stdin.flush()
        t.join()
        assert (work / "built.json").exists() and len(done) == 1
        done[0].kb.close()  # type: ignore[attr-defined]
    finally:
        child.kill()
        child.wait()


def test_pool_scorings_of_the_losses_to_ppr(tiny_ctx):
    """The passage scorings measured against PPR's wins ("The second passage …",
    scripts/eval/RESULTS.md): with the seeds' repeats counted whole, a non-seed node once or
    shared among its units can only lower a passage's units' sum; with no lexical seeds, no
    fusion and no bridge hop every pool unit is the entry seeds' own spreading's, so the
    entry-reached cap changes nothing; and the retrieval's functions are put back."""
    import kgservice.expansion.retrieve as retrieval
    from scripts.eval import methods as M
    from scripts.eval.run import POOL_SCORINGS, project_pool_scored

    real = (retrieval.unit_scores, retrieval.lexical_seeds)
    bare = {"lexical_weight": 0.0, "dense_weight": 0.0, "bridge_weight": 0.0}
    lowered = 0
    for q in tiny_ctx.ds.questions:
        shipped = M.project(tiny_ctx, q.id, {})
        for how in ("non-seed once", "shared"):
            got = project_pool_scored(tiny_ctx, q.id, {}, how)
            assert set(got) == set(shipped) and all(got[p] <= shipped[p] + 1e-9 for p in got)
            lowered += sum(got[p] < shipped[p] - 1e-9 for p in got)
        assert project_pool_scored(tiny_ctx, q.id, {}, "entry cap", **bare) == M.project(tiny_ctx, q.id, {}, **bare)
    assert lowered > 0  # the tiny set has a passage of two units about one non-seed node
    assert set(POOL_SCORINGS.values()) == {"non-seed once", "shared", "entry cap", "entry cap, bridge reached",
                                           "non-seed once, entry cap"}
    assert (retrieval.unit_scores, retrieval.lexical_seeds) == real
