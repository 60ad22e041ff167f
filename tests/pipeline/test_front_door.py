"""KnowledgeBase as the library API: the calls docs/cli.md's "From Python" table lists.

Expectations are worked out by hand from the inputs (unit lines counted, the rule-based
offline extractor's sentences counted), not from the code's own output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kgservice.errors import InputError
from kgservice.expansion import DirectedResult
from kgservice.service import KnowledgeBase, NodeNotFound, SpreadExpansion
from tests.pipeline.conftest import make_settings

SMOKING = Path(__file__).resolve().parents[2] / "kgservice" / "demo" / "texts" / "03_smoking.txt"


def test_ingest_paths_routes_unit_files_and_text(tmp_path, boundary):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.units").write_text("#a1 {cat} [is a] {mammal}\n#a2 {mammal} [has] {fur}\n", "utf-8")
    (folder / "smoking.txt").write_bytes(SMOKING.read_bytes())
    (folder / "ignored.bin").write_bytes(b"\x00")  # neither a unit file nor a text type: not picked up
    with KnowledgeBase(make_settings(tmp_path)) as kb:
        units, text = kb.ingest_paths([folder])
        assert units is not None and units.units_added == 2
        # 03_smoking.txt: 8 simple declaratives, one extraction call (one chunk)
        assert text is not None and text.to_dict()["units_extracted"] == 8
        assert boundary.tasks().count("extract") == 1
        assert kb.stats()["units"] == 2 + text.units_added
        again_units, again_text = kb.ingest_paths([folder])
        assert again_units.units_unchanged == 2 and again_text.to_dict()["unchanged_documents"] == 1


def test_expand_returns_result_objects(tmp_path):
    with KnowledgeBase(make_settings(tmp_path)) as kb:
        kb.ingest_notation("#u1 {cat} [is a] {mammal}\n#u2 {mammal} [has] {fur}")
        directed = kb.expand("Cat")
        assert isinstance(directed, DirectedResult) and sorted(directed.units) == ["u1", "u2"]
        spread = kb.expand("cat", "spread", limit=2, max_hops=1)
        assert isinstance(spread, SpreadExpansion)
        # one hop: cat keeps E0 = 1, mammal receives 1 × τ(belongs_to) = 0.7
        assert spread.to_dict()["ranked"] == [{"node": "cat", "energy": 1.0}, {"node": "mammal", "energy": 0.7}]
        assert spread.to_dict()["params"]["K"] == 1 and spread.to_dict()["hops"] == 1
        with pytest.raises(NodeNotFound, match="no node 'dog' in the graph"):
            kb.expand("dog")
        with pytest.raises(InputError, match="'directed' or 'spread'"):
            kb.expand("cat", "sideways")  # type: ignore[arg-type]


def test_one_llm_per_knowledge_base_and_vectors_reopen(tmp_path):
    with KnowledgeBase(make_settings(tmp_path)) as kb:
        assert kb.llm is kb.llm
        assert kb.vectors_if_open() is None  # never opened by asking
        kb.ingest_notation("{cat} [is a] {mammal}")
        assert kb.vectors_if_open() is None  # the ingest held the vector directory for its upsert only
        first = kb.vectors
        assert kb.vectors_if_open() is first and first.count() == 2  # cat and mammal embedded
        fresh = kb.reopen_vectors(recreate=True)
        assert fresh is kb.vectors and fresh is not first and fresh.count() == 0
    other = KnowledgeBase(make_settings(tmp_path / "other"))
    assert other.llm is not kb.llm
    other.close()
