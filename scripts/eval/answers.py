"""The answer evaluation: questions with gold answers over documents, through the whole
``kg ask`` pipeline with any litellm model (``--model``, ``--api-base``) or with none
(``--no-model``: the retrieval-only answer), scored per question and in total. ``--floor``
measures instead the no-model answer's relevance floor unit by unit (:mod:`scripts.eval.floor_eval`).

Sets:

* ``real-model`` — the four texts and ten questions of ``../shared/eval/real-model`` (gold
  answers written for them, one unanswerable). The texts are ingested through the same model
  (extraction, entity resolution), so the run exercises every LLM step of the service.
* ``musique`` — the first ``--limit`` questions of the MuSiQue slice (``dataset.py``), over
  their own passages (gold and distractors) ingested from HippoRAG's released triples, so only
  the query side needs a model; the gold answer and its aliases come from the MuSiQue file.

Per question: the answer and whether it was found; token F1 and exact match of its short
answer (``short_answer``, the few words the model gives beside its cited sentences; the
sentences when it gave none) against the gold answer and aliases (SQuAD normalisation; the
best over the aliases), F1 of the sentences' text beside it, and whether a gold answer
appears in the sentences at all (``hit``); how many of its sentences the units they
cite support (the grounded-answer check, :func:`kgservice.answer.sentence_problems`); whether
the cited units hold the gold answer; a false "not in the graph" (answerable, not found); a
correct abstention (unanswerable, not found); LLM calls, repairs, prompt and completion tokens
and seconds cold, and the calls of the same question asked again (0 when the caches serve it).

A run with ``--record FILE`` appends every model exchange (request hash + reply) to FILE
(``--reuse OLD`` serves the requests OLD holds from it and asks the model only the new ones);
``--model kgoffline/scripted --recordings FILE`` replays them with no model (a request missing
from the recording fails the run, it never falls back), and ``--expect RESULT.json`` checks
that the replay gives the recorded run's answers and counts.

    python scripts/eval/answers.py --set real-model --model openai/x --api-base http://127.0.0.1:PORT/v1 \\
        --record scripts/eval/recordings/real-model.jsonl --json scripts/eval/recordings/real-model.json
    python scripts/eval/answers.py --set real-model --model kgoffline/scripted \\
        --recordings scripts/eval/recordings/real-model.jsonl --expect scripts/eval/recordings/real-model.json
    python scripts/eval/answers.py --set musique --no-model
    python scripts/eval/answers.py --floor --show --json floor.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import string
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

REAL_MODEL_DIR = Path(os.environ.get("KG_EVAL_REAL_MODEL")
                      or ROOT.parent / "shared" / "eval" / "real-model")
NOT_FOUND = "not in the graph"


# --- scoring (SQuAD / HotpotQA answer normalisation) ------------------------------------------

def normalize(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces.

    >>> normalize("The  Finnish markka!"), normalize("6.8 inches (17.3 cm)")
    ('finnish markka', '68 inches 173 cm')
    """
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 of a prediction against one gold answer.

    >>> round(token_f1("Eddie Vedder wrote the lyrics", "Eddie Vedder"), 3), token_f1("Norway", "Sweden")
    (0.667, 0.0)
    """
    p, g = normalize(prediction).split(), normalize(gold).split()
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if not p or not g or same == 0:
        return float(p == g)
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def best(prediction: str, golds: list[str], metric: Any) -> float:
    return max((float(metric(prediction, g)) for g in golds), default=0.0)


def exact(prediction: str, gold: str) -> bool:
    return normalize(prediction) == normalize(gold)


def contains(prediction: str, gold: str) -> bool:
    """Does the gold answer appear in the prediction, word for word after normalisation?

    >>> contains("The lyrics were written by Eddie Vedder.", "Eddie Vedder"), contains("Norway.", "NO")
    (True, False)
    """
    g = normalize(gold)
    return bool(g) and f" {g} " in f" {normalize(prediction)} "


# --- sets --------------------------------------------------------------------------------------

@dataclass
class Item:
    id: str
    question: str
    answers: list[str]  # the gold answer first, then its aliases; empty when unanswerable
    answerable: bool = True
    type: str = ""


# The real-model set's gold answers are descriptions ("Eddie Vedder: founding member, lead
# vocals"); these are their short forms for F1 and "hit", one list per question, the first the
# answer itself. q6's description in questions.json names the 1916 snowstorm, but the text it
# rests on says January 1950 brought 57.2 in and the 1916 event left 29 in: the gold is January 1950.
REAL_MODEL_GOLD: dict[str, list[str]] = {
    "q1": ["Eddie Vedder"],
    "q2": ["6.8 inches (17.3 cm)", "6.8 inches"],
    "q2b": ["6.8 inches (17.3 cm)", "6.8 inches"],
    "q3": ["6.8 inches (17.3 cm)", "6.8 inches"],
    "q3b": ["6.8 inches (17.3 cm)", "6.8 inches"],
    "q4": ["lead vocals"],
    "q5": ["widespread difficulties"],
    "q6": ["January 1950"],
    "q7": [],
    "q8": ["LZ77 algorithm; zip 1.9", "LZ77", "zip 1.9"],
}


def load_real_model(directory: Path = REAL_MODEL_DIR) -> tuple[list[Path], list[Item]]:
    """The texts (in file-name order, as the first run ingested them) and the questions."""
    docs = sorted((directory / "docs").iterdir())
    raw = json.loads((directory / "questions.json").read_text("utf-8"))
    items = [Item(q["id"], q["question"], REAL_MODEL_GOLD.get(q["id"], [q["answer"]] if q.get("answer") else []),
                  bool(q.get("answerable", True)), q.get("type", "")) for q in raw]
    return docs, items


def load_musique_set(limit: int) -> tuple[Any, list[Item]]:
    """The first ``limit`` MuSiQue questions and the passages they list (gold and distractors)."""
    from scripts.eval.dataset import MUSIQUE_DIR, load_musique

    ds = load_musique(limit=limit, slice_corpus=True)
    raw = {q["id"]: q for q in json.loads((MUSIQUE_DIR / "musique_train.json").read_text("utf-8"))}
    items = [Item(q.id, q.question, [raw[q.id]["answer"], *raw[q.id].get("answer_aliases", [])],
                  bool(raw[q.id].get("answerable", True)), q.kind) for q in ds.questions]
    return ds, items


# --- the run -----------------------------------------------------------------------------------

@dataclass
class Row:
    id: str
    question: str
    type: str
    answerable: bool
    found: bool
    answer: str
    gold: str | None
    f1: float
    em: bool
    hit: bool
    cited: list[str]
    sentences: int
    supported_sentences: int
    cited_hold_answer: bool
    gold_in_graph: bool  # some unit's text holds a gold answer: else a miss is the extractor's, not the pipeline's
    false_not_in_graph: bool
    correct_abstention: bool
    calls: int
    repairs: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    repeat_calls: int
    by_purpose: dict[str, int] = field(default_factory=dict)
    stop_reason: str = ""
    short_answer: str = ""  # the answer's short form (AskResult.short_answer): f1 and em score it
    f1_sentences: float = 0.0  # F1 of the sentences' text, as f1 was scored before answers had a short form


def _usage(llm: dict[str, Any]) -> tuple[int, int, int, int, dict[str, int]]:
    by = llm.get("by_purpose") or {}
    return (int(llm.get("calls", 0)), sum(int(v.get("repairs", 0)) for v in by.values()),
            int(llm.get("prompt_tokens", 0)), int(llm.get("completion_tokens", 0)),
            {k: int(v.get("calls", 0)) for k, v in sorted(by.items())})


def _support(kb: Any, res: Any) -> tuple[int, str]:
    """(how many sentences the units they cite support — the grounded-answer check —, the cited units' text)."""
    from kgservice.answer import sentence_problems, unit_vocabulary
    from kgservice.expansion.lexical import unit_text

    units = {u.id: u for u in kb.store.get_units(list(res.cited))}
    vocab = {uid: unit_vocabulary(u, kb.store, kb.lexicon) for uid, u in units.items()}
    ok = 0
    for s in res.sentences:
        cites = [c for c in s.get("cites", []) if c in vocab]
        if cites and not sentence_problems(s["text"], [v for c in cites for v in vocab[c]], res.question,
                                           kb.lexicon.languages):
            ok += 1
    return ok, " ".join(unit_text(u) for u in units.values())


def graph_text(kb: Any) -> str:
    """Every unit's words, normalised (for ``gold_in_graph``)."""
    from kgservice.expansion.lexical import unit_text

    return " " + " ".join(normalize(unit_text(u)) for u in kb.store.iter_units()) + " "


def ask_one(kb: Any, item: Item, no_model: bool, everything: str = "", max_rounds: int | None = None) -> Row:
    """The question cold, then once more (the repeat's calls), scored against the gold."""
    from kgservice.pipeline.asking import AskParams, ask_with_llm, retrieval_only_ask

    params = AskParams() if max_rounds is None else AskParams(max_rounds=max_rounds)

    def run() -> Any:
        return retrieval_only_ask(kb, item.question) if no_model else ask_with_llm(kb, item.question, params=params)

    t0 = time.perf_counter()
    res = run()
    seconds = time.perf_counter() - t0
    again = run()
    answer = " ".join(s["text"] for s in res.sentences) if res.found else NOT_FOUND
    short = res.short_answer if res.found else ""
    scored = short or answer  # the short answer when the model wrote one, else the sentences
    calls, repairs, pt, ct, by = _usage(res.llm)
    supported, cited_text = _support(kb, res) if res.found else (0, "")
    golds = item.answers
    return Row(
        id=item.id, question=item.question, type=item.type, answerable=item.answerable, found=res.found,
        answer=answer, gold=golds[0] if golds else None,
        f1=round(best(scored, golds, token_f1), 4) if golds and res.found else 0.0,
        em=bool(golds) and res.found and best(scored, golds, exact) > 0,
        hit=bool(golds) and res.found and best(answer, golds, contains) > 0,
        cited=list(res.cited), sentences=len(res.sentences) if res.found else 0, supported_sentences=supported,
        cited_hold_answer=bool(golds) and res.found and best(cited_text, golds, contains) > 0,
        gold_in_graph=any(normalize(g) and f" {normalize(g)} " in everything for g in golds),
        false_not_in_graph=item.answerable and not res.found, correct_abstention=not item.answerable and not res.found,
        calls=calls, repairs=repairs, prompt_tokens=pt, completion_tokens=ct, seconds=round(seconds, 2),
        repeat_calls=int(again.llm.get("calls", 0)), by_purpose=by, stop_reason=res.stop_reason, short_answer=short,
        f1_sentences=round(best(answer, golds, token_f1), 4) if golds and res.found else 0.0)


def totals(rows: list[Row]) -> dict[str, Any]:
    """The set's figures: means of the scores, sums and medians of the counts."""
    n = len(rows)
    answerable = [r for r in rows if r.answerable]
    if not n:
        return {"questions": 0}
    return {
        "questions": n,
        "f1": round(100 * statistics.fmean(r.f1 for r in answerable), 1) if answerable else None,
        "f1_sentences": round(100 * statistics.fmean(r.f1_sentences for r in answerable), 1) if answerable else None,
        "em": round(100 * statistics.fmean(r.em for r in answerable), 1) if answerable else None,
        "hit": round(100 * statistics.fmean(r.hit for r in answerable), 1) if answerable else None,
        "found": sum(r.found for r in rows),
        "false_not_in_graph": sum(r.false_not_in_graph for r in rows),
        "correct_abstentions": sum(r.correct_abstention for r in rows),
        "unanswerable": n - len(answerable),
        "sentences": sum(r.sentences for r in rows),
        "supported_sentences": sum(r.supported_sentences for r in rows),
        "cited_hold_answer": sum(r.cited_hold_answer for r in answerable),
        "gold_in_graph": sum(r.gold_in_graph for r in answerable),
        "calls": sum(r.calls for r in rows),
        "calls_median": statistics.median(r.calls for r in rows),
        "calls_max": max(r.calls for r in rows),
        "repairs": sum(r.repairs for r in rows),
        "prompt_tokens": sum(r.prompt_tokens for r in rows),
        "completion_tokens": sum(r.completion_tokens for r in rows),
        "tokens_per_question": round(sum(r.prompt_tokens + r.completion_tokens for r in rows) / n),
        "seconds": round(sum(r.seconds for r in rows), 1),
        "repeat_calls": sum(r.repeat_calls for r in rows),
    }


class RequestSizes:
    """Characters per model request, by task (what a prompt costs before any tokenizer): the
    provider boundary (:func:`kgservice.llm.client.provider_completion`: litellm or the offline
    stand-in) wrapped for the run."""

    def __init__(self) -> None:
        self.by_task: dict[str, list[int]] = {}

    def install(self) -> None:
        from kgservice.llm import client
        from kgservice.llm.offline import payload_of

        real = client.provider_completion

        def counting(*a: Any, **kw: Any) -> Any:
            msgs = kw.get("messages") or []
            task = payload_of(msgs).get("task") or "?"
            if len(msgs) > 2:
                task += " (repair)"
            self.by_task.setdefault(task, []).append(sum(len(str(m.get("content", ""))) for m in msgs))
            return real(*a, **kw)

        client.provider_completion = counting

    def summary(self) -> dict[str, dict[str, int]]:
        return {t: {"requests": len(v), "mean_chars": round(statistics.fmean(v)), "max_chars": max(v)}
                for t, v in sorted(self.by_task.items())}


def reuse_recorded(paths: list[str]) -> int:
    """Serve every request a recording holds from it (through ``kgoffline/scripted``) and send
    only the others to the model: after a change that alters some requests (a prompt, the
    round cap), a run re-asks the model only what changed, and ``--record`` still writes the
    whole run. Returns how many requests the recordings hold."""
    from kgservice.llm import client
    from kgservice.llm.keys import request_key
    from kgservice.llm.offline import load_recordings

    keys = {json.loads(line)["key"] for p in paths for line in Path(p).read_text("utf-8").splitlines() if line.strip()}
    load_recordings([Path(p) for p in paths])
    real = client.provider_completion

    def served(*a: Any, **kw: Any) -> Any:
        if request_key(kw.get("messages") or []) in keys:
            kw = {**kw, "model": "kgoffline/scripted"}
            kw.pop("api_base", None)
            kw.pop("response_format", None)
        return real(*a, **kw)

    client.provider_completion = served
    return len(keys)


def make_kb(data_dir: Path, args: argparse.Namespace, model: str) -> Any:
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

    settings = Settings(
        data_dir=data_dir, embedder=args.embedder, vector_backend="edge", llm_model=model, llm_model_chosen=True,
        llm_api_base=args.api_base, llm_timeout=args.timeout, llm_max_retries=0, llm_retry_wait=0.0,
        llm_recordings=tuple(Path(p) for p in args.recordings), llm_record=Path(args.record) if args.record else None)
    return KnowledgeBase(settings)


def build(kb: Any, set_name: str, args: argparse.Namespace) -> tuple[list[Item], dict[str, Any]]:
    """Ingest the set; returns its questions and what the ingest cost."""
    t0 = time.perf_counter()
    if set_name == "real-model":
        docs, items = load_real_model()
        _, text = kb.ingest_paths(docs)
        report = {"documents": len(docs), "units": kb.stats()["units"], "nodes": kb.stats()["nodes"],
                  "llm": text.llm if text is not None else {},
                  "resolution": [d.resolution for d in text.documents] if text is not None else []}
    else:
        from scripts.eval.dataset import build_units

        ds, items = load_musique_set(args.limit)
        units, _, skipped = build_units(ds, kb.lexicon)
        rep = kb.ingest_units(units)
        report = {"passages": len(ds.passages), "units": rep.units_added, "triples_skipped": skipped,
                  "nodes": kb.stats()["nodes"], "llm": {}}
    report["seconds"] = round(time.perf_counter() - t0, 1)
    if args.limit and set_name == "real-model":
        items = items[:args.limit]
    return items, report


def table(rows: list[Row], tot: dict[str, Any]) -> str:
    head = ("| question | type | found | short answer | F1 (EM) | F1 sentences | hit | sentences supported | "
            "cited hold gold | gold in graph | calls (repairs) | tokens in / out | s | repeat calls |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        found = "yes" if r.found else ("**no (false)**" if r.false_not_in_graph else "no (correct)")
        short = r.short_answer.replace("|", "/")[:40]
        lines.append(f"| {r.id} | {r.type} | {found} | {short} | {r.f1:.2f}{' (EM)' if r.em else ''} | "
                     f"{r.f1_sentences:.2f} | {'yes' if r.hit else 'no'} | "
                     f"{r.supported_sentences}/{r.sentences} | {'yes' if r.cited_hold_answer else 'no'} | "
                     f"{'yes' if r.gold_in_graph else ('no' if r.answerable else '-')} | {r.calls} ({r.repairs}) | {r.prompt_tokens} / {r.completion_tokens} | {r.seconds} | "
                     f"{r.repeat_calls} |")
    lines.append(f"| **total** ({tot['questions']}) | | {tot['found']} | | {tot['f1']} ({tot['em']}) | "
                 f"{tot['f1_sentences']} | {tot['hit']} % | "
                 f"{tot['supported_sentences']}/{tot['sentences']} | {tot['cited_hold_answer']} | {tot['gold_in_graph']} | "
                 f"{tot['calls']} ({tot['repairs']}); median {tot['calls_median']} | "
                 f"{tot['prompt_tokens']} / {tot['completion_tokens']} | {tot['seconds']} | {tot['repeat_calls']} |")
    return "\n".join(lines)


# what a replay must reproduce, question by question
EXPECTED = ("found", "answer", "short_answer", "cited", "calls", "repairs", "false_not_in_graph", "correct_abstention",
            "repeat_calls", "by_purpose")


def compare(result: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """Differences between a replay and the recorded run (empty = the same answers and counts)."""
    out = []
    got = {r["id"]: r for r in result["rows"]}
    for want in expected["rows"]:
        have = got.get(want["id"])
        if have is None:
            out.append(f"{want['id']}: not run")
            continue
        for k in EXPECTED:
            if have[k] != want[k]:
                out.append(f"{want['id']}: {k} {have[k]!r} != recorded {want[k]!r}")
    for k in ("calls", "repairs", "false_not_in_graph", "correct_abstentions"):
        if result["totals"][k] != expected["totals"][k]:
            out.append(f"total {k}: {result['totals'][k]} != recorded {expected['totals'][k]}")
    if result["ingest"].get("llm", {}).get("calls") != expected["ingest"].get("llm", {}).get("calls"):
        out.append(f"ingest calls: {result['ingest'].get('llm', {}).get('calls')} != recorded "
                   f"{expected['ingest'].get('llm', {}).get('calls')}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=("real-model", "musique"))
    ap.add_argument("--floor", action="store_true",
                    help="instead: the no-model answer's relevance floor, unit by unit, in every variant (floor_eval.py)")
    ap.add_argument("--floor-set", action="append", choices=("demo", "notes", "musique", "2wiki", "hotpotqa"),
                    default=[],
                    help="with --floor: a set to measure (repeatable; default demo, notes and musique); 2wiki: "
                         "the 2Wiki first hops, with --floor-data naming a 2Wiki graph's set file and --gold audited; "
                         "hotpotqa: the off-topic questions and HotpotQA's whole questions (no gold: refusals only), "
                         "with --floor-data naming a HotpotQA graph's set file")
    ap.add_argument("--floor-data", type=Path, default=None,
                    help="with --floor: MuSiQue under another graph of its corpus (a set file of the same passages, "
                         "e.g. rules_set.py's or spacy_triples.py's) instead of its GPT-3.5 triples")
    ap.add_argument("--gold", choices=("mechanical", "audited", "answers"), default="mechanical",
                    help="with --floor: MuSiQue first hops' gold units, every unit of the supporting passage "
                         "holding the answer's words (mechanical) or the read ones of "
                         "answer_sets/musique-gold-audited*.json (audited; the GPT-3.5, spaCy and rules graphs); "
                         "answers: the answer-level read of the top 3 (answer_sets/answer-level-read.json) beside "
                         "the unit-level read gold, over every first hop (scripts/eval/answer_gold.py)")
    ap.add_argument("--answers-labels", type=Path, default=None,
                    help="with --gold answers: the labels file (default answer_sets/answer-level-read.json)")
    ap.add_argument("--answers-unlabelled", type=Path, default=None, metavar="FILE",
                    help="with --gold answers: write the run's unlabelled top-3 units to FILE (blind, shuffled) "
                         "instead of scoring")
    ap.add_argument("--answers-merge", type=Path, default=None, metavar="FILE",
                    help="instead: add FILE's labelled rows (an --answers-unlabelled file, labelled) to the labels file")
    ap.add_argument("--show", action="store_true", help="with --floor: every question's top 3 and verdict")
    ap.add_argument("--floor-compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                    help="instead: two --floor --json runs of one graph question by question (better / same / "
                         "worse, sign test)")
    ap.add_argument("--limit", type=int, default=None, help="the first N questions (musique: default 30)")
    ap.add_argument("--only", default="", help="comma-separated question ids (a probe of a few questions)")
    ap.add_argument("--model", help="any litellm model (openai/..., kgoffline/scripted for a replay)")
    ap.add_argument("--api-base", default=None, help="the model's endpoint (an OpenAI-compatible server)")
    ap.add_argument("--no-model", action="store_true",
                    help="answer with no model (retrieval only); real-model texts are extracted by kgoffline/rules")
    ap.add_argument("--max-rounds", type=int, default=None, help="drill-down round cap (default: the service's)")
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("KG_LLM_TIMEOUT", 1800)))
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--record", help="append every model exchange (request hash + reply) to this JSONL file")
    ap.add_argument("--recordings", action="append", default=[], help="recorded exchanges to replay (JSONL)")
    ap.add_argument("--reuse", action="append", default=[],
                    help="with --model: serve the requests this recording holds from it, ask the model only the others")
    ap.add_argument("--expect", help="a recorded run's --json: exit 1 unless the answers and counts are the same")
    ap.add_argument("--json", help="write the rows, totals and ingest figures here")
    ap.add_argument("--data-dir", help="keep the knowledge base here (default: a temporary directory)")
    args = ap.parse_args(argv)
    if args.floor_compare:
        from scripts.eval.floor_eval import compare as compare_floors

        print("\n".join(compare_floors(*args.floor_compare)))
        return 0
    if args.answers_merge:
        from scripts.eval import answer_gold
        from scripts.eval.floor_eval import ANSWER_LABELS

        target = args.answers_labels or ANSWER_LABELS
        try:
            new = json.loads(args.answers_merge.read_text("utf-8"))["rows"]
            doc = answer_gold.merge(json.loads(target.read_text("utf-8")), new)
        except (OSError, KeyError, ValueError) as e:
            print(f"answers.py: --answers-merge {args.answers_merge}: {e}", file=sys.stderr)
            return 2
        target.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", "utf-8")
        print(f"{len(new)} rows added to {target}")
        return 0
    if args.floor:
        from scripts.eval.floor_eval import ANSWER_LABELS, GoldError, main as floor

        try:
            return floor(args.floor_set, args.show, Path(args.json) if args.json else None, args.floor_data,
                         args.gold, args.answers_labels or ANSWER_LABELS, args.answers_unlabelled)
        except GoldError as e:
            print(f"answers.py: {e}", file=sys.stderr)
            return 2
    if not args.set:
        ap.error("--set (or --floor) is required")
    if args.set == "musique" and args.limit is None:
        args.limit = 30
    if not args.no_model and not args.model:
        ap.error("--model (or --no-model) is required")
    model = "kgoffline/rules" if args.no_model else args.model
    work = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="kg-answers-"))
    from kgservice.llm import LLMError

    kb = make_kb(work / "kg", args, model)
    from kgservice.llm import client

    provider = client.provider_completion  # wrapped for this run only (a test runs several in one process)
    sizes = RequestSizes()
    sizes.install()
    if args.reuse:
        print(f"reusing {reuse_recorded(args.reuse)} recorded requests", file=sys.stderr)
    try:
        items, ingest = build(kb, args.set, args)
        if args.only:
            items = [i for i in items if i.id in set(args.only.split(","))]
        print(f"{args.set}: {len(items)} questions; ingest {ingest}", file=sys.stderr)
        rows = []
        everything = graph_text(kb)
        for item in items:
            row = ask_one(kb, item, args.no_model, everything, args.max_rounds)
            rows.append(row)
            print(f"{row.id}: {'found' if row.found else NOT_FOUND} f1={row.f1:.2f} calls={row.calls} "
                  f"repairs={row.repairs} repeat={row.repeat_calls} | {row.answer[:160]}", file=sys.stderr)
    except LLMError as exc:  # a replay missing a request fails here, naming it: never a made-up answer
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        kb.close()
        client.provider_completion = provider
    tot = totals(rows)
    result = {"set": args.set, "model": "none" if args.no_model else model, "ingest": ingest, "totals": tot,
              "request_chars": sizes.summary(), "rows": [asdict(r) for r in rows]}
    print(table(rows, tot))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", "utf-8")
    if args.expect:
        diff = compare(result, json.loads(Path(args.expect).read_text("utf-8")))
        if diff:
            print("the replay differs from the recorded run:\n  " + "\n  ".join(diff), file=sys.stderr)
            return 1
        print(f"replay matches {args.expect}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
