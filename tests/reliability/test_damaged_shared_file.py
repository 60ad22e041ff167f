"""A damaged shared.sqlite3 (saved results, community map): named by the command that reads it,
found by ``kg doctor`` and rebuilt by ``--repair``; the knowledge is untouched."""

from __future__ import annotations

import json
from pathlib import Path

from kgservice.config import Settings
from kgservice.service import KnowledgeBase
from tests.reliability.test_damaged_service_files import UNITS, damage, kg


def test_damaged_shared_file_is_named_and_rebuilt(tmp_path: Path):
    d = tmp_path / "kg"
    (tmp_path / "t.units").write_text(UNITS, "utf-8")
    assert kg(d, "ingest", str(tmp_path / "t.units")).exit_code == 0
    with KnowledgeBase(Settings(data_dir=d, embedder="hash:64")) as kb:
        for i in range(40):  # pages to damage
            kb.save_result(f"question {i} " + "x" * 200, "answer " + "y" * 200, contributor="ann")
    path = d / "shared.sqlite3"
    damage(path)
    r = kg(d, "export", str(tmp_path / "g.json"))
    assert r.exit_code == 1 and "shared.sqlite3" in r.output and "kg doctor --repair" in r.output, r.output
    found = json.loads(kg(d, "doctor", "--json", "--no-vectors").stdout)["findings"]
    assert [f["check"] for f in found] == ["service_files"] and "shared.sqlite3" in found[0]["examples"][0]
    assert kg(d, "doctor", "--repair", "--json", "--no-vectors").exit_code == 0
    assert list(d.glob("shared.sqlite3.damaged-*"))
    assert kg(d, "export", str(tmp_path / "g.json")).exit_code == 0
    assert json.loads(kg(d, "stats", "--json").stdout)["units"] == 2
