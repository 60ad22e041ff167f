"""What a capable model's first run showed, replayed: its real replies (the transcript in
``../shared/eval/real-model``, 55 exchanges) fed to the service's checks and steps. Each test
failed on the code of that run (commit 920605e):

* a question whose concept is a stored unit's predicate ("average annual snowfall") was
  refused "not in the graph" after one call, and a refusal stayed cached after an ingest;
* 8 of 9 answers were sent back for ordinary words (song, gets, his, because, between, used,
  more, plays);
* quantity and e-mail literals were rejected as copies of the source;
* "caused" missed the causal family, so ``kg expand --mode causal`` found no chain;
* entity resolution asked "zip" / "gunzip" (twice) and "gzip compilation" / "gzip format",
  never "Seattle" / "Seattle, Washington".
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kgservice.answer import AnswerOut, unit_vocabulary, validate_answer
from kgservice.extraction.extract import no_source_mirrors
from kgservice.extraction.schema import Extraction, to_units
from kgservice.llm.client import json_text
from kgservice.notation import parse_units
from kgservice.pipeline.asking import ask
from tests.pipeline.conftest import ask_params

ROOT = Path(__file__).resolve().parents[2]
REAL_MODEL = Path(os.environ.get("KG_EVAL_REAL_MODEL") or ROOT.parent / "shared" / "eval" / "real-model")
pytestmark = pytest.mark.skipif(
    not (REAL_MODEL / "transcript.jsonl").exists() and os.environ.get("CI") != "true",
    reason=f"the real-model transcript is not at {REAL_MODEL} (CI requires it: ../shared beside the clone)")

# the first reply to every grounded-answer request of the run (the exchanges with two messages)
FIRST_ANSWERS = (11, 16, 21, 25, 29, 34, 37, 41, 50, 54)


@pytest.fixture(scope="module")
def transcript() -> dict[int, dict]:
    return {d["n"]: d for d in map(json.loads, (REAL_MODEL / "transcript.jsonl").read_text("utf-8").splitlines())}


def payload(exchange: dict) -> dict:
    return json.loads(exchange["messages"][1]["content"])


def reply_units(kb, exchange: dict, doc: str, mode: str):
    """The units the service made of a real extraction reply (the content ids the run stored)."""
    return to_units(Extraction.model_validate_json(json_text(exchange["answer"])), kb.lexicon, doc=doc, mode=mode)


@pytest.mark.parametrize("kb", ["embedded"], indirect=True)
def test_a_concept_stated_as_a_predicate_is_answered_and_a_refusal_is_read_again_after_an_ingest(
        kb, boundary, script, transcript):
    """q2: the model read "average annual snowfall" as a concept (n13); no node has that label,
    but a unit's predicate is that phrase, so the drill-down runs and finds it (the run's judge
    and answer replies, n15 and n16)."""
    kb.ingest_units(reply_units(kb, transcript[4], "c-seattle-snow.txt", "detail"))
    script.override_task("extract", lambda p: transcript[13]["answer"])
    script.override_task("drilldown", lambda p: transcript[15]["answer"])
    script.override_task("answer", lambda p: transcript[16]["answer"].replace("gets an average annual snowfall of",
                                                                             "has an average annual snowfall of"))
    q = payload(transcript[13])["text"]
    res = ask(kb, q, params=ask_params())
    assert res.found and res.cited == ["u-79c4b589543c"], res.stop_reason
    assert boundary.tasks() == ["extract", "drilldown", "answer"]

    # q7: a question the graph cannot answer (the run's replies n31, n33, n34) ...
    script.override_task("extract", lambda p: transcript[31]["answer"])
    script.override_task("drilldown", lambda p: transcript[33]["answer"])
    script.override_task("answer", lambda p: transcript[34]["answer"])
    kb.ingest_units(reply_units(kb, transcript[1], "a-pearl-jam.md", "summary"))
    kb.ingest_units(reply_units(kb, transcript[2], "b-brother-song.md", "summary"))
    q7 = payload(transcript[31])["text"]
    first = ask(kb, q7, params=ask_params())
    assert not first.found and first.llm["calls"] >= 2
    assert ask(kb, q7, params=ask_params()).llm["calls"] == 0  # nothing ingested since: the caches answer
    # ... is read again after an ingest that touches none of its nodes (the answer may now be
    # stated under other words), not served from the cache
    kb.ingest_units(parse_units("{Rick Parashar} [produced] {Pearl Jam debut record}", kb.lexicon, doc="x.units"))
    n = boundary.count
    again = ask(kb, q7, params=ask_params())
    assert not again.found and boundary.tasks()[n:][:1] == ["extract"]
    # a rephrased question is derived afresh, never answered by the first one's refusal
    n = boundary.count
    ask(kb, "Who was the producer of Ten by Pearl Jam?", params=ask_params())
    assert boundary.tasks()[n:][:1] == ["extract"]


@pytest.mark.parametrize("kb", ["embedded"], indirect=True)
def test_the_runs_first_answer_replies_need_at_most_one_repair(kb, transcript):
    """Every first grounded-answer reply of the run, checked against the units it was shown:
    the run sent 8 of the 9 found ones back for ordinary words; now only n54's "particularly"
    (a qualifier the unit does not carry) is refused, and q6 may state its conclusion."""
    refused = {}
    for n in FIRST_ANSWERS:
        p = payload(transcript[n])
        units = {}
        for x in p["units"]:
            [u] = parse_units(x["unit"], kb.lexicon, doc="t.units")
            kb.ingest_units([u])
            units[x["id"]] = u
        vocab = {uid: unit_vocabulary(u, kb.store, kb.lexicon) for uid, u in units.items()}
        problems = validate_answer(AnswerOut.model_validate_json(json_text(transcript[n]["answer"])), units, vocab,
                                   p["question"], kb.lexicon.languages)
        if problems:
            refused[n] = problems
    assert list(refused) == [54] and "particularly" in refused[54][0], refused
    conclusion = json.loads(transcript[29]["answer"])["sentences"][2]["text"]
    assert conclusion == "So January 1950 brought more snow than the 1916 snow event."  # accepted above


def test_quantities_ranges_and_mail_addresses_are_literals(transcript):
    """The Seattle text's first reply (n3) and the gzip README's (n42) were sent back as
    "copying the source"; they copy no sentence."""
    for n in (3, 42):
        text = payload(transcript[n])["text"]
        no_source_mirrors(text)(Extraction.model_validate_json(json_text(transcript[n]["answer"])))
    # a whole sentence is still refused
    seattle = payload(transcript[3])["text"]
    copied = Extraction.model_validate({"units": [{"subject": "Seattle", "predicate": "says", "args": [
        {"literal": "Seattle typically receives some snowfall on an annual basis but heavy snow is rare"}]}]})
    with pytest.raises(ValueError, match="copies the source text"):
        no_source_mirrors(seattle)(copied)


@pytest.mark.parametrize("kb", ["embedded"], indirect=True)
def test_inflected_predicates_reach_their_family_and_the_causal_chain_is_found(kb, transcript):
    """q5: the run's Seattle units (n4) say [caused] and [is]: the causal family and belongs_to."""
    stated = reply_units(kb, transcript[4], "c-seattle-snow.txt", "detail")
    units = {u.predicate: u for u in stated}
    assert (units["caused"].family, units["caused"].kind) == ("导致", "content")
    assert units["is"].kind == "belongs_to"
    assert units["received"].family == units["receives"].family  # one relation, two tenses
    kb.ingest_units(stated)
    chains = kb.expand("December 2008 snow event", mode="causal").to_dict()["results"][0]["chains"]
    assert [[h["unit"] for h in c] for c in chains] == [["u-bb61ed48d96a"]]
    assert chains[0][0]["dst"] == "widespread difficulties"


RECORDED_RUN = ROOT / "scripts" / "eval" / "recordings" / "real-model.jsonl"


@pytest.mark.parametrize("kb", ["embedded", "neo4j"], indirect=True)
def test_q5s_chain_is_found_in_the_recorded_capable_model_run(kb):
    """q5 in the recorded run (scripts/eval/recordings): the model wrote the snow text's effect
    however it chose — as a value, ``[caused] (widespread difficulties)``, in the run of
    2026-12-06 — and ``kg expand … --mode causal`` ends a chain there (it found none: effects
    stated as values were left out). The expected hop is read off the model's reply here."""
    from kgservice.ids import literal_id, node_id

    replies = [json.loads(line) for line in RECORDED_RUN.read_text("utf-8").splitlines()]
    [snow] = [r["response"] for r in replies if r["purpose"] == "extract" and "December 2008" in r["response"]]
    reply = json.loads(json_text(snow))
    event = "December 2008 snow event"
    effects = {node_id(a["node"]) if a.get("node") else literal_id(a["literal"])
               for u in reply["units"] if u["subject"] == event and u["predicate"].startswith("caus")
               for a in u["args"]}
    assert effects  # the reply states what the event caused
    kb.ingest_units(reply_units(kb, {"answer": snow}, "c-seattle-snow.txt", "detail"))
    chains = kb.expand(event, mode="causal").to_dict()["results"][0]["chains"]
    assert {c[0]["dst"] for c in chains} == effects and all(c[0]["src"] == node_id(event) for c in chains)


@pytest.mark.parametrize("kb", ["embedded"], indirect=True)
def test_entity_resolution_asks_what_a_user_would_and_never_twice(kb, boundary, script, transcript, tmp_path):
    """The run's extraction replies for three texts (n1, n4, n6), ingested in the run's order:
    "Seattle" (the snow text) is asked against "Seattle, Washington" (the band's text); the pairs
    the run asked and the model refused ("zip" / "gunzip", "gzip compilation" / "gzip format")
    are obviously different names and not asked; a re-ingest asks nothing."""
    texts = {payload(transcript[n])["text"]: transcript[n]["answer"] for n in (1, 4, 6)}
    texts[payload(transcript[3])["text"]] = transcript[4]["answer"]  # the snow text's reply, as repaired
    script.override_task("extract", lambda p: texts[p["text"]])
    asked = []
    script.override_task("same_concept", lambda p: asked.append((p["new"], p["existing"], p["relation"]))
                         or {"same": True, "reason": "the city of Seattle"})
    docs = REAL_MODEL / "docs"
    for name in ("a-pearl-jam.md", "c-seattle-snow.txt", "d-gzip-readme.md"):
        kb.ingest_paths([docs / name])
    assert asked == [("Seattle", "Seattle, Washington", "qualifier")]
    assert {n.label for n in kb.store.get_nodes(["seattle", "seattle, washington"])} == {"Seattle, Washington"}
    kb.ingest_paths([docs / "c-seattle-snow.txt", docs / "d-gzip-readme.md"], force=True)
    assert len(asked) == 1 and "same_concept" not in boundary.tasks()[-2:]


@pytest.mark.parametrize("kb", ["embedded"], indirect=True)
def test_judge_requests_are_bounded_escape_free_and_define_every_field(kb, script, transcript):
    """q7 over the run's band and song units (n1, n2), with the run's judge replies (n32: "Ten is
    identified but no producer is stated", next seed Brother; n33: no more seeds). The run sent
    the whole pool again in round 2 (n33: 4,207 characters, every Pearl Jam member again); now a
    round shows the units judged relevant so far and the new ones, at most five per crowded node,
    no notation escapes, and every field of the message is one the system prompt defines."""
    from kgservice.drilldown.judge import judge_messages
    from kgservice.drilldown.loop import HUB_CAP

    kb.ingest_units(reply_units(kb, transcript[1], "a-pearl-jam.md", "summary")
                    + reply_units(kb, transcript[2], "b-brother-song.md", "summary"))
    kb.ingest_units(parse_units(r"{Ten} [released in] (August 27, 1991 (US\))", kb.lexicon, doc="t.units"))
    sent = []
    replies = iter([transcript[32]["answer"], transcript[33]["answer"]])
    script.override_task("extract", lambda p: transcript[31]["answer"])
    script.override_task("drilldown", lambda p: sent.append(p) or next(replies))
    script.override_task("answer", lambda p: transcript[34]["answer"])
    res = ask(kb, payload(transcript[31])["text"], params=ask_params())
    assert not res.found and len(sent) == 2
    first, second = ({u["id"] for u in p["units"]} for p in sent)
    relevant = set(json.loads(transcript[32]["answer"])["relevant"]) & first
    assert relevant and second & first == relevant  # round 2 resends only what round 1 found relevant
    for p in sent:
        members = [u for u in p["units"] if "{Pearl Jam}" in u["unit"] and u["id"] not in relevant]
        assert len(members) <= HUB_CAP, [u["unit"] for u in members]
    system = judge_messages("q", [], [], "both", [], [])[0]["content"]
    for p in sent:
        assert all(f"`{k}`" in system for k in p), [k for k in p if f"`{k}`" not in system]
        assert all(f"`{m}`" in system for m in [p["mode"]])  # "both" too
        assert not any("\\" in u["unit"] for u in p["units"])  # "(August 27, 1991 (US))", no "\\)"
    assert any("1991 (US))" in u["unit"] for p in sent for u in p["units"])
