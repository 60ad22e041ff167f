"""The four test documents ingested and asked about with a capable model's recorded replies
(tests/data/documents-model.jsonl, made by `python3 -m scripts.eval.documents --record`):
the run gives the model's answers again, each answer citing the unit on the page where a
reader finds the fact. The pages and lines were found by hand in the files (the PDF as printed:
page 2 is "North Branch Millers River" (4 lines), then "Fowler River", whose 2nd and 3rd lines
hold "It is an inflow to / Newfound Lake"; the DOCX's 9th line is "It is owned by the Mingo
County Airport Authority."; slide 3's second bullet is the Berlin one). If the extraction or
answer prompts change, record again (the replay then misses its keys)."""

from __future__ import annotations

import json
import os

import pytest

from kgservice.config import Settings
from scripts.eval.documents import EMBEDDER, OUTCOME, RECORDING, run

HAND = {
    "Which lake does the Fowler River flow into?": "rivers.pdf, page 2, lines 6–7",
    "Who owns Appalachian Regional Airport?": 'airports.docx, section "Appalachian Regional Airport", line 9',
    "Where was basketball played at the 1936 Summer Olympics?": "olympics.pptx, slide 3, line 3",
}


@pytest.fixture(scope="module", autouse=True)
def forget_the_recording():
    """The recorded replies are loaded into the offline provider's table, which kgoffline/rules
    reads first too: later tests must not get the model's replies for the same texts."""
    yield
    from kgservice.llm.offline import SCRIPT

    SCRIPT.clear()


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    settings = Settings(data_dir=tmp_path_factory.mktemp("kg"), embedder=EMBEDDER, llm_model="kgoffline/scripted",
                        llm_recordings=(RECORDING,), llm_retry_wait=0.0)
    return run(settings)


def test_the_model_answers_again_citing_the_page(replayed: dict):
    recorded = json.loads(OUTCOME.read_text("utf-8"))
    assert [(a["answer"], a["cited"]) for a in replayed["answers"]] == \
        [(a["answer"], a["cited"]) for a in recorded["answers"]]
    answered = [a for a in replayed["answers"] if a["sources"]]
    # all three, each citing the place found by hand; the 1936 question was refused before the
    # relevance floor learnt that "1936 Summer Olympics" is written inside a label
    assert len(answered) == 3
    for a in answered:
        assert [s["location"] for s in a["sources"]] == [HAND[a["question"]]], a
    docs = replayed["documents"]
    assert {d: (v["format"], len(v["pages"])) for d, v in docs.items()} == {
        "airports.docx": ("docx", 0), "olympics.pptx": ("pptx", 6), "rivers.pdf": ("pdf", 3),
        "universities.html": ("html", 0)}
    assert all(v["units"] > 20 for v in docs.values())
