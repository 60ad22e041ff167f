"""The answer eval (scripts/eval/answers.py): its scoring worked out by hand, and the
recorded runs with a capable model replayed with no model — the same answers and the same
counts (calls, repairs, "not in the graph") as the run that was recorded, question by
question. A request the recording does not hold fails the run; nothing falls back."""

from __future__ import annotations

import doctest
import json
import os
from pathlib import Path

import pytest

from scripts.eval import answers
from scripts.eval.dataset import MUSIQUE_DIR

RECORDINGS = Path(answers.__file__).with_name("recordings")
CI = os.environ.get("CI") == "true"


@pytest.fixture(autouse=True)
def only_this_recording():
    """The offline provider's table is per process: each replay starts from its own recording."""
    from kgservice.llm.offline import SCRIPT

    SCRIPT.clear()
    yield
    SCRIPT.clear()


def test_scoring_by_hand():
    assert doctest.testmod(answers).failed == 0
    # "The lyrics of Brother were written by Eddie Vedder." against "Eddie Vedder": 2 shared tokens
    # of 8 (article dropped) -> precision 2/8, recall 1, F1 = 2 * 0.25 / 1.25 = 0.4
    assert answers.token_f1("The lyrics of Brother were written by Eddie Vedder.", "Eddie Vedder") == pytest.approx(0.4)
    assert answers.best("It is Norway.", ["Norway", "NO"], answers.token_f1) == pytest.approx(2 * (1 / 3) / (4 / 3))
    assert answers.contains("Seattle gets 6.8 inches (17.3 cm) a year", "6.8 inches (17.3 cm)")
    rows = [answers.Row(id=str(i), question="q", type="t", answerable=ans, found=found, answer="a", gold="a",
                        f1=f1, em=False, hit=found, cited=[], sentences=1, supported_sentences=1,
                        cited_hold_answer=found, gold_in_graph=True, false_not_in_graph=ans and not found,
                        correct_abstention=not ans and not found, calls=c, repairs=0, prompt_tokens=10,
                        completion_tokens=5, seconds=1.0, repeat_calls=0)
            for i, (ans, found, f1, c) in enumerate([(True, True, 1.0, 3), (True, False, 0.0, 4),
                                                     (False, False, 0.0, 2)])]
    t = answers.totals(rows)
    assert (t["f1"], t["false_not_in_graph"], t["correct_abstentions"], t["calls"], t["calls_median"]) == \
        (50.0, 1, 1, 9, 3)


def _replay(name: str, extra: list[str], tmp_path: Path) -> int:
    rec, expect = RECORDINGS / f"{name}.jsonl", RECORDINGS / f"{name}.json"
    recorded = json.loads(expect.read_text("utf-8"))
    args = ["--set", recorded["set"], "--model", "kgoffline/scripted", "--recordings", str(rec),
            "--expect", str(expect), "--json", str(tmp_path / "replay.json"), "--data-dir", str(tmp_path / "kb"),
            *extra]
    return answers.main(args)


@pytest.mark.skipif(not (answers.REAL_MODEL_DIR / "questions.json").exists() and not CI,
                    reason=f"the real-model set is not at {answers.REAL_MODEL_DIR} (CI requires it)")
def test_real_model_run_replays_with_the_same_answers_and_counts(tmp_path, capsys):
    """Ingest of the four texts (extraction, entity resolution) and the ten questions, every
    model reply from the recording."""
    assert _replay("real-model", [], tmp_path) == 0, capsys.readouterr().err
    out = json.loads((tmp_path / "replay.json").read_text("utf-8"))
    assert out["totals"]["calls"] > 0 and out["ingest"]["llm"]["calls"] > 0  # the model path ran, replayed


@pytest.mark.skipif(not (answers.REAL_MODEL_DIR / "questions.json").exists() and not CI,
                    reason=f"the real-model set is not at {answers.REAL_MODEL_DIR} (CI requires it)")
def test_a_request_missing_from_the_recording_fails_the_replay(tmp_path, capsys):
    lines = (RECORDINGS / "real-model.jsonl").read_text("utf-8").splitlines()
    answer_lines = [i for i, line in enumerate(lines) if json.loads(line)["purpose"] == "answer"]
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(line for i, line in enumerate(lines) if i != answer_lines[0]) + "\n", "utf-8")
    args = ["--set", "real-model", "--model", "kgoffline/scripted", "--recordings", str(short),
            "--data-dir", str(tmp_path / "kb")]
    assert answers.main(args) == 1
    assert "no recorded response for this request" in capsys.readouterr().err


@pytest.mark.skipif(not MUSIQUE_DIR.exists() and not CI,
                    reason=f"MuSiQue slice not present at {MUSIQUE_DIR} (CI requires it: ../shared beside the clone)")
def test_musique_run_replays_with_the_same_answers_and_counts(tmp_path, capsys):
    """30 MuSiQue questions over their passages' released triples (no model at ingest), the
    query side from the recording."""
    assert _replay("musique", ["--limit", "30"], tmp_path) == 0, capsys.readouterr().err


@pytest.mark.skipif(not (answers.REAL_MODEL_DIR / "questions.json").exists() and not CI,
                    reason=f"the real-model set is not at {answers.REAL_MODEL_DIR} (CI requires it)")
def test_reuse_takes_recorded_replies_and_asks_the_model_only_the_rest(tmp_path, capsys):
    """``--reuse``: the recording without its answer replies, the rule-based stand-in as "the
    model". The ingest, key nodes and drill-down come from the recording (the stand-in's own
    extraction would build another graph), the answers from the stand-in, which restates units
    ("{subject} {predicate} {object}.") where the capable model wrote its own sentences."""
    lines = (RECORDINGS / "real-model.jsonl").read_text("utf-8").splitlines()
    kept = [line for line in lines if json.loads(line)["purpose"] != "answer"]
    assert len(kept) < len(lines)
    short = tmp_path / "no-answers.jsonl"
    short.write_text("\n".join(kept) + "\n", "utf-8")
    rec = tmp_path / "again.jsonl"
    args = ["--set", "real-model", "--model", "kgoffline/rules", "--reuse", str(short), "--record", str(rec),
            "--json", str(tmp_path / "out.json"), "--data-dir", str(tmp_path / "kb"), "--only", "q1"]
    assert answers.main(args) == 0, capsys.readouterr().err
    out = json.loads((tmp_path / "out.json").read_text("utf-8"))
    recorded = json.loads((RECORDINGS / "real-model.json").read_text("utf-8"))
    assert out["ingest"]["units"] == recorded["ingest"]["units"]
    [q1] = out["rows"]
    [was] = [r for r in recorded["rows"] if r["id"] == "q1"]
    assert q1["by_purpose"] == was["by_purpose"] and q1["found"]
    assert q1["answer"] != was["answer"]  # the stand-in's sentence, not the recorded one
    assert q1["short_answer"] == "Eddie Vedder"  # the stand-in's: the first unit's object
    # --record wrote the whole run: the reused replies and the new ones
    assert len((rec.read_text("utf-8")).splitlines()) == out["ingest"]["llm"]["calls"] + q1["calls"]


def test_floor_compare_counts_each_question_once_by_hand(tmp_path, capsys):
    """Two --floor --json runs compared question by question: of three first hops, one whose gold
    unit moved into the top 3 is better, one that abstained is worse, one answered in both is the
    same (1 / 1 / 1, p = 2 * C(2,0) / 4 capped at 1); an off-topic question answered in the first
    run and refused in the second is better."""
    from scripts.eval import floor_eval

    def q(text, kind, answerable, top3, strength, gold=("g",)):
        return {"set": "musique" if answerable else "off-topic", "kind": kind, "q": text, "answerable": answerable,
                "gold": list(gold) if answerable else [], "top3": top3, "verdict": {"3": [strength, "", []]}}

    before = {"questions": {"musique": [q("a", "first hop", True, ["x", "y", "z"], "strong"),
                                        q("b", "first hop", True, ["g"], "strong"),
                                        q("c", "first hop", True, ["g"], "partial"),
                                        q("d", "domain", False, ["x"], "partial")]}}
    after = {"questions": {"musique": [q("a", "first hop", True, ["x", "g", "z"], "strong"),
                                       q("b", "first hop", True, ["g"], "none"),
                                       q("c", "first hop", True, ["y", "g"], "strong"),
                                       q("d", "domain", False, ["x"], "none")]}}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(before)), b.write_text(json.dumps(after))
    assert answers.main(["--floor-compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "musique: musique (first hop): 2 -> 2 of 3; better / same / worse 1 / 1 / 1 (p 1.00)" in out
    assert "musique: off-topic: 0 -> 1 of 1; better / same / worse 1 / 0 / 0 (p 1.00)" in out
    assert "    + a" in out and "    - b" in out and "    + d" in out
    assert doctest.testmod(floor_eval).failed == 0
