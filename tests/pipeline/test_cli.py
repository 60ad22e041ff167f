"""`kg ingest-text`, `kg ask`, `kg cache stats|clear` end to end on demo/texts, offline."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kgservice.cli.app import app

DEMO = Path(__file__).resolve().parents[2] / "demo" / "texts"


def run(tmp_path, *args):
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:256"]
    res = CliRunner().invoke(app, base + list(args))
    assert res.exit_code == 0, res.output
    return res.output


def test_demo_end_to_end(tmp_path, boundary):
    rep = json.loads(run(tmp_path, "ingest-text", str(DEMO), "--llm", "kgoffline/rules", "--json"))
    # by hand from demo/texts: 10 + 5 + 8 + 7 simple declaratives the rule extractor parses
    assert rep["files"] == 4 and rep["units_extracted"] == 30 and rep["units_added"] == 30
    assert rep["llm"]["by_purpose"]["extract"]["calls"] == 4
    again = json.loads(run(tmp_path, "ingest-text", str(DEMO), "--llm", "kgoffline/rules", "--json"))
    assert again["unchanged_documents"] == 4 and again["llm"]["calls"] == 0

    ask = ["ask", "What does smoking cause?", "--llm", "kgoffline/rules", "--threshold", "0.7"]
    cold = json.loads(run(tmp_path, *ask, "--json"))
    assert cold["found"] and cold["llm"]["calls"] == 3
    assert any("lung cancer" in u["unit"] for u in cold["hit_units"])
    warm = json.loads(run(tmp_path, *ask, "--json"))
    assert warm["llm"]["calls"] == 0 and warm["answer"] == cold["answer"]

    text = run(tmp_path, *ask, "--trace")
    assert "round 1 [both] seeds:" in text and "decision (cached)" in text and "stop: judge: enough" in text
    assert "LLM: 0 call(s), 0 tokens" in text

    stats = json.loads(run(tmp_path, "cache", "stats", "--json"))
    assert stats["caches"]["decision"]["entries"] == 2 and stats["caches"]["key_nodes"]["hits"] == 2
    # one question: key_nodes 1 + topk 1 (one key node) + activation 1 (mode both) + decision 2 (judge, answer)
    assert "cleared 5 cache entries" in run(tmp_path, "cache", "clear")
    assert json.loads(run(tmp_path, "cache", "stats", "--json"))["caches"]["decision"]["entries"] == 0


def test_scripted_model_without_recording_fails_clearly(tmp_path, boundary):
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:256"]
    assert CliRunner().invoke(app, [*base, "init"]).exit_code == 0
    res = CliRunner().invoke(app, [*base, "ask", "What does smoking cause?", "--llm", "kgoffline/scripted"])
    assert res.exit_code == 1
    msg = " ".join(res.output.split())  # rich wraps long lines
    assert "LLM step 'key_nodes' (kgoffline/scripted)" in msg and "no recorded response" in msg
    assert "KG_LLM_MODEL=kgoffline/rules" in msg
