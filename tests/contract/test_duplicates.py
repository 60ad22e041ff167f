"""Duplicate facts are merged at ingest (DESIGN §1's merge step), the same way on both backends."""

from __future__ import annotations

BATCH = """\
#a {smoking} [causes] {lung cancer}
#b {Smoking} [leads to] {Lung  Cancer}
#c {smoking} [causes] {lung cancer}
    ()[confidence] (high)
#d {smoking} [causes] {heart disease}
#e {lung cancer} [causes] {smoking}
#f {smoking} [causes] (lung cancer)
"""


def test_duplicates_in_a_batch_and_against_the_store(store, ingest):
    r = ingest(BATCH)
    # b: same subject id, family 导致 (leads to = causes), same argument id; c: modifier rows do not count;
    # e: other direction; f: a literal argument is not the node
    assert r.duplicates == {"b": "a", "c": "a"}
    assert r.units_added == 4
    assert store.subject_mentions("smoking") == ["a", "d", "f"]
    r = ingest("#g {SMOKING} [引起] {lung cancer}\n#a {smoking} [causes] {lung cancer}\n", doc="again.units")
    assert r.duplicates == {"g": "a"} and r.units_added == 0 and r.units_unchanged == 1


def test_an_update_is_not_a_duplicate_and_only_live_units_count(store, ingest):
    ingest(BATCH)
    # h restates a but supersedes it: an update, stored; a is no longer live
    r = ingest("#h {smoking} [causes] {lung cancer}\n    ()[supersedes] #a\n", doc="update.units")
    assert r.units_added == 1 and r.duplicates == {}
    r = ingest("#i {smoking} [causes] {lung cancer}\n", doc="later.units")
    assert r.duplicates == {"i": "h"}


def test_duplicates_found_from_either_side_of_a_hub(store, ingest):
    # Neo4j looks stored duplicates up by (subject, argument 0), walking whichever side has
    # fewer edges: d1's subject is a hub (walked from its argument), d2's argument is one
    # (walked from its subject). n1 shares the subject with s* and the argument with o*, and
    # m1 shares subject and argument 0 with s7 but not argument 1: neither is a duplicate.
    lines = [f"#s{i} {{hub}} [causes] {{t{i}}}" for i in range(60)]
    lines += [f"#o{i} {{x{i}}} [causes] {{target}}" for i in range(60)]
    lines += ["#p1 {hub} [ranges from] {t7} {t8}"]
    ingest("\n".join(lines) + "\n")
    r = ingest("#d1 {hub} [leads to] {t7}\n#d2 {x9} [causes] {target}\n#n1 {hub} [causes] {target}\n"
               "#m1 {hub} [ranges from] {t7} {t9}\n#d3 {hub} [ranges from] {t7} {t8}\n", doc="again.units")
    assert r.duplicates == {"d1": "s7", "d2": "o9", "d3": "p1"}
    assert r.units_added == 2
