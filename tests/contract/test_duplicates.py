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
