"""`kg stats --json` has the same keys on both backends and whatever the store holds."""

from __future__ import annotations

from kgservice.notation import parse_units

CORPUS = """\
#k1 {smoking} [causes] {lung cancer}
#k2 {吸烟} [同义] {smoking}
"""


def test_stats_keys_do_not_depend_on_backend_or_content(bare_kb):
    empty = bare_kb.stats()
    bare_kb.ingest_units(parse_units(CORPUS, bare_kb.lexicon, doc="k.units"))
    full = bare_kb.stats()
    expected = ["backend", "units", "nodes", "relations", "superseded_units", "kind:synonym", "kind:belongs_to",
                "kind:of", "kind:content", "kind:related_to", "kind:superseded", "kind:narrows"]
    assert list(empty) == expected and list(full) == expected
    assert (empty["units"], empty["kind:content"]) == (0, 0)
    assert (full["units"], full["kind:content"], full["kind:synonym"], full["kind:of"]) == (2, 1, 1, 0)
