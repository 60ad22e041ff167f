"""Scoring and tiered matching on small hand-made graphs (expectations worked out by hand)."""

import math

import pytest

from kgservice.graphify.loader import graph_from_data
from kgservice.graphify.scoring import (
    find_node_tiers,
    query_seeds,
    resolve_path_endpoint,
    resolve_single_node,
    score_query,
)
from kgservice.graphify.terms import graphify_terms


def make(nodes, links=(), **flags):
    return graph_from_data({"nodes": [dict(n) for n in nodes], "links": [dict(ln) for ln in links], **flags})


CACHE = make([
    {"id": "cache", "label": "cache"},
    {"id": "cache_utils", "label": "cache utils"},
    {"id": "frontier", "label": "frontier"},
    {"id": "frontier_cache", "label": "frontier cache"},
    {"id": "misc", "label": "misc", "source_file": "cache/misc.py"},
])


def test_idf_weighted_tiers_by_hand():
    # N = 5; "frontier" is in 2 labels, "cache" in 3
    w_f = math.log(1 + 5 / 3)
    w_c = math.log(1 + 5 / 4)
    ranked = dict((nid, s) for s, nid in score_query(CACHE, ["frontier", "cache"], per_term=False).ranked)
    # whole-query exact label (x10 exact tier) + prefix "frontier" + substring "cache", full coverage
    assert ranked["frontier_cache"] == pytest.approx(10000 * w_f + w_c + 100 * w_f)
    # one exact term out of two: the exact tier scaled by (1/2)^2
    assert ranked["frontier"] == pytest.approx(1000 * w_f / 4)
    assert ranked["cache"] == pytest.approx(1000 * w_c / 4)
    assert ranked["cache_utils"] == pytest.approx(100 * w_c / 4)
    # source-file hit only
    assert ranked["misc"] == pytest.approx(0.5 * w_c)
    order = [nid for _s, nid in score_query(CACHE, ["frontier", "cache"], per_term=False).ranked]
    assert order == ["frontier_cache", "frontier", "cache", "cache_utils", "misc"]


def test_seeds_gap_cut_then_one_per_term():
    # only "frontier cache" is within 20 % of the top score; then the best node of each
    # term, strongest term first ("frontier" is rarer than "cache")
    seeds = query_seeds(CACHE, graphify_terms("how does the frontier cache work"))
    assert seeds == ["frontier_cache", "frontier", "cache"]
    assert query_seeds(CACHE, ["cache"]) == ["cache"]
    assert query_seeds(CACHE, ["nothing"]) == []


def test_per_term_ties_go_to_the_more_connected_node():
    g = make([{"id": "a", "label": "token a"}, {"id": "b", "label": "token b"}, {"id": "c", "label": "c"}],
             [{"source": "b", "target": "c"}])
    # equal scores: the ranking breaks the tie by label length then id ...
    assert query_seeds(g, ["token"]) == ["a", "b"]
    # ... the per-term guarantee by degree first
    assert score_query(g, ["token"], per_term=True).best_seed_by_term == {"token": "b"}


def test_relational_verbs_get_no_guaranteed_seed():
    g = make([{"id": "x", "label": "parser"}, {"id": "y", "label": "callsite"}])
    assert query_seeds(g, graphify_terms("who calls parser")) == ["x"]
    assert query_seeds(g, graphify_terms("calls")) == ["y"]


def test_tiers_source_exact_prefix_substring():
    assert find_node_tiers(CACHE, "cache") == ([], ["cache"], ["cache_utils"], ["frontier_cache"])
    assert find_node_tiers(CACHE, "cache/misc.py") == (["misc"], [], [], [])
    assert find_node_tiers(CACHE, "") == ([], [], [], [])


FILES = make([
    {"id": "cat_validate", "label": "validate()", "source_file": "shop/catalog.py", "source_location": "L40"},
    {"id": "cart_validate", "label": "validate()", "source_file": "shop/cart.py", "source_location": "L9"},
    {"id": "cart_add", "label": ".add()", "source_file": "shop/cart.py", "source_location": "L3"},
    {"id": "cart_add2", "label": ".add()", "source_file": "shop/cart.py", "source_location": "L7"},
    {"id": "email", "label": "EmailController", "source_file": "mail.py"},
])


def test_explain_refuses_to_guess_across_files():
    nid, msg = resolve_single_node(FILES, "validate")
    assert nid is None
    assert msg.splitlines()[:5] == [
        "Ambiguous: 'validate' matches 2 nodes in different files.",
        "  shop/catalog.py", "    id: cat_validate", "  shop/cart.py", "    id: cart_validate"]
    assert resolve_single_node(FILES, "shop/cart.py::validate") == ("cart_validate", None)
    assert resolve_single_node(FILES, "cart_validate") == ("cart_validate", None)


def test_same_file_twins_and_near_misses():
    nid, msg = resolve_single_node(FILES, ".add()")
    assert nid is None and msg.startswith("Ambiguous: '.add()' matches 2 nodes in shop/cart.py.")
    nid, msg = resolve_single_node(FILES, "mailcontroller")
    assert nid is None and msg.startswith("No exact match for 'mailcontroller'.")
    assert "  EmailController  mail.py" in msg
    assert resolve_single_node(FILES, "Email") == ("email", None)  # a prefix resolves
    assert resolve_single_node(FILES, "zzz") == (None, "No node matching 'zzz' found.")


def test_path_endpoint_scoring_prefers_full_token_matches():
    g = make([{"id": "rs", "label": "Rejection Summary"},
              {"id": "judge", "label": "Degenerate Reject-Everything Judge"}])
    nid, scored, err = resolve_path_endpoint(g, "reject everything judge")
    assert err is None and nid == "judge" and scored
