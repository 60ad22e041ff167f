"""The no-model answer's candidates carry the lines each unit was read from
(:func:`kgservice.answer.retrieval_only.unit_sources`), which break the ranking's ties
(:func:`kgservice.answer.shape.by_source`); a unit no document states has none."""

from __future__ import annotations

from pathlib import Path

from kgservice.answer.retrieval_only import answer_units, unit_sources
from kgservice.config import Settings
from kgservice.notation import parse_units
from kgservice.service import KnowledgeBase

TEXT = """# Van Helsing

Abraham Van Helsing is a vampire hunter.

Abraham Van Helsing is a character from the fictional work Dracula.
"""
QUESTION = "What fictional work does Abraham Van Helsing exist in?"


def test_candidates_carry_their_source_lines(tmp_path: Path) -> None:
    kb = KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64", llm_model="kgoffline/rules"))
    try:
        kb.ingest_document("vh.md", TEXT)
        kb.ingest_units(parse_units("#b1 {Abraham Van Helsing} [is a] {professor}\n", kb.lexicon))
        lines = {uid: ln for uid, ln in kb.document("vh.md").unit_lines.items()}
        got = answer_units(kb, QUESTION)
        by_line = {3: "Abraham Van Helsing is a vampire hunter.",
                   5: "Abraham Van Helsing is a character from the fictional work Dracula."}
        for uid, ln in lines.items():
            assert got.candidates[uid].source == by_line[ln[0]]
        assert got.candidates["b1"].source == ""  # no document states it
        assert unit_sources(kb.store, ["b1"]) == {}
        # a caller may hand the sources in (the eval's graphs keep no documents)
        given = answer_units(kb, QUESTION, sources=lambda units: {u.id: "given" for u in units})
        assert {c.source for c in given.candidates.values()} == {"given"}
    finally:
        kb.close()
