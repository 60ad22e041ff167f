"""A unit written in notation is recorded with its lines through its last modifier row (not
just its first line, nor the blank and comment lines after it), so a cited unit's excerpt
carries its modifiers; a unit file's title is its first comment without the ``%``."""

from __future__ import annotations

from pathlib import Path

from kgservice.answer.sources import cited_sources
from kgservice.config import Settings
from kgservice.lifecycle.text import _notation_title, _title
from kgservice.service import KnowledgeBase

TEXT = """\
% Smoking: what it causes
#smk-013 {smoking} [is a] {habit}
#smk-014 {smoking} [causes] {lung cancer}
    ()[confidence] (high)
    ()[source] (cohort study)

% a closing comment
"""


def test_notation_units_span_their_modifier_rows_and_cite_them(tmp_path: Path) -> None:
    kb = KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64"))
    try:
        kb.ingest_document("notes/smoking.units", TEXT)
        doc = kb.document("notes/smoking.units")
        assert {u: tuple(ln) for u, ln in doc.unit_lines.items()} == {"smk-013": (2, 2), "smk-014": (3, 5)}
        assert doc.title == "Smoking: what it causes"
        [row] = cited_sources(kb, ["smk-014"])
        assert row["lines"] == [3, 5]
        assert row["snippet"] == ("#smk-014 {smoking} [causes] {lung cancer}\n    ()[confidence] (high)\n"
                                  "    ()[source] (cohort study)")
    finally:
        kb.close()


def test_titles_drop_comment_and_heading_marks_but_keep_unit_ids() -> None:
    assert _notation_title("\n%% Python: who made it\n#p1 {Python} [is a] {language}\n", "a.units") == \
        "Python: who made it"
    assert _notation_title("#p1 {Python} [is a] {language}\n", "a.units") == "#p1 {Python} [is a] {language}"
    assert _notation_title("\n \n", "notes/a.units") == "a.units"
    assert _title("## Tea and coffee\ntext", "t.md") == "Tea and coffee"
    assert _title("#smk-014 is a unit id, not a heading", "t.md") == "#smk-014 is a unit id, not a heading"
