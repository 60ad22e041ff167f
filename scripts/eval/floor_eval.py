"""The relevance floor of the no-model answer, measured unit by unit: is an answering unit among
its 3 units, and does it say "not in the graph" where it should (:mod:`kgservice.answer.floor`)?
Run through the answer eval: ``python scripts/eval/answers.py --floor [--floor-set demo|notes|musique|2wiki]
[--json FILE] [--show]`` (its whole answers, scored against gold answers, are ``answers.py --set``).

Sets (``scripts/eval/answer_sets/``):

* ``demo``: hand-written questions with gold facts over the demo graph (``kgservice/demo``:
  the unit files, and the texts through ``kgoffline/rules``, as ``kg demo`` builds it);
* ``notes``: a small notes folder (``answer_sets/notes``, text through ``kgoffline/rules``);
* ``musique``: MuSiQue's 100 questions over its GPT-3.5 graph (``run.py --musique``'s cached
  build), two ways — the whole multi-hop question, and its first hop alone (MuSiQue's own
  decomposition, "What company published Journal of Psychotherapy Integration?"); a gold unit
  is one of the step's supporting passage whose text holds the step's answer (or an alias);
* ``2wiki`` (with ``--floor-data`` naming one of the 2Wiki graphs' set files, and ``--gold
  audited``): the first hops of 2WikiMultiHopQA's 20 IRCoT questions (``2wiki-first-hops.json``,
  written from each question's reasoning alone) against the units read blind as stating their
  answer (``2wiki-gold-spacy.json``, ``2wiki-gold-rules.json``; the 6,195-passage haystack graphs
  give the questions' 102 passages the same triples, so one gold serves both sizes): a set no rule
  of the no-model answer was chosen on;
* ``hotpotqa`` (with ``--floor-data`` naming a HotpotQA graph's set file): the off-topic
  questions, all 36, and HotpotQA's 100 whole questions with no gold (the set has no unit gold):
  their refusals are a proxy for false abstentions (a whole multi-hop question the graph may not
  answer in its top 3 is still about the graph's things, so "not in the graph" for it is wrong),
  and their top-3 column is empty by construction;
* ``offtopic.json``: questions neither graph answers (other domains, nonsense, near misses),
  asked of the demo graph and of the MuSiQue graph (30 each), and all 36 of a 2Wiki graph.

For each variant (how many ranked units the floor's verdict reads) it prints, per set: answerable questions with a gold unit in the top 3 (and how
many the retrieval's own top 3 held), false abstentions ("not in the graph" for an answerable
question), and for the off-topic set the abstentions; then abstention precision, recall and
the false-abstention rate over all questions asked of a graph. A variant is chosen on one
graph and checked on the other (RESULTS.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kgservice.answer.floor import NAMED, TOP, VECTOR, Relevance  # noqa: E402
from kgservice.answer.retrieval_only import answer_units, unit_sentence  # noqa: E402
from kgservice.entry.match import tokens  # noqa: E402

SETS = Path(__file__).resolve().parent / "answer_sets"
# the variants measured side by side: how many ranked units the verdict reads, and after an "@"
# how many of the retrieval's units the answer ranks (its pool; none: the shipped pool); a
# trailing "n" / "v": the stranger-word rule with the floor's NAMED / VECTOR narrowing
# (:func:`kgservice.answer.floor.stranger_read`) instead of the no-model answer's own
VARIANTS = ("3", "5", "10", "3@200", "3n", "3v", "3nv")
NARROWINGS = {"n": NAMED, "v": VECTOR}
SHIPPED = f"{TOP}"


@dataclass
class Asked:
    """One question asked of a graph: its answer units' texts (best first, the whole pool
    ranked) and the verdict, per variant, from one retrieval."""

    set: str
    question: str
    answerable: bool
    gold: list[str] = field(default_factory=list)  # gold facts (demo, notes) or gold unit ids (MuSiQue)
    ranked: list[str] = field(default_factory=list)  # unit ids, best first
    texts: dict[str, str] = field(default_factory=dict)
    retrieval: list[str] = field(default_factory=list)  # the retrieval's own top 3
    relevance: dict[str, Relevance] = field(default_factory=dict)
    rankings: dict[str, list[str]] = field(default_factory=dict)
    kind: str = ""
    shown: dict[str, str] = field(default_factory=dict)  # unit id -> its sentence as the no-model answer shows it
    answers: list[str] = field(default_factory=list)  # the gold answer strings a reader reads the units against
    # how many units the answer lists, per variant: of its top 3, those sharing something with
    # the question (:func:`kgservice.answer.floor.listed`); none when it says "not in the graph"
    listed: dict[str, list[str]] = field(default_factory=dict)

    def top(self, variant: str) -> list[str]:
        """The units the answer lists in ``variant`` (its top 3 when it lists none: a refusal's
        best units, shown for reading)."""
        return self.listed.get(variant) or self.rankings[variant][:3]

    def not_listed(self, variant: str) -> list[str]:
        """The units of the answer's top 3 it does not list, sharing nothing with the question
        (none when it says "not in the graph")."""
        got = self.listed.get(variant)
        return [u for u in self.rankings[variant][:3] if u not in got] if got else []


def unit_text(u: Any) -> str:
    """A unit's words, lower-cased, as the gold facts are written ("smoking causes lung cancer")."""
    parts = [u.subject, u.predicate] + [a.node or a.literal or "" for a in u.args]
    return " ".join(" ".join(parts).lower().split())


def ask(kb: Any, set_name: str, question: str, answerable: bool, gold: list[str], variants: tuple[str, ...],
        kind: str = "", sources: Any = None) -> Asked:
    """The no-model answer (:func:`kgservice.answer.retrieval_only.answer_units`) in every
    variant, from one retrieval. ``sources``: the units' source texts when the graph keeps no
    documents (:func:`passage_sources`)."""
    found = kb.retrieve(question)
    pools = {v.partition("@")[2] for v in variants} - {""}
    wide = {p: kb.retrieve(question, max_units=int(p)) for p in pools}
    pool = kb.store.get_units(sorted({u.id for f in [found, *wide.values()] for u in f.units}))
    out = Asked(set_name, question, answerable, gold, [], {u.id: unit_text(u) for u in pool},
                [u.id for u in found.units[:3]], kind=kind, shown={u.id: unit_sentence(u) for u in pool})
    for v in variants:
        judge, _, size = v.partition("@")
        narrow = frozenset(NARROWINGS[c] for c in judge.lstrip("0123456789"))
        kw: dict[str, Any] = {"narrow": narrow} if narrow else {}
        if sources is not None:
            kw["sources"] = sources
        res = answer_units(kb, question, retrieval=wide[size] if size else found,
                           judge=int(judge.rstrip("nv")), **kw)
        out.relevance[v] = res.relevance
        out.rankings[v] = [m.id for m in res.matches] or out.retrieval
        out.listed[v] = [u.id for u in res.units]
    out.ranked = out.rankings[variants[0]]
    # the answer may rank units beyond the retrieval's (its own pool): read their words too, or a
    # gold fact among them is never seen (the demo's free-threaded CPython unit, ranked but
    # outside the 40 units, had no text when the 200-unit variant was not run)
    beyond = sorted({u for r in out.rankings.values() for u in r} - set(out.texts))
    for u in kb.store.get_units(beyond):
        out.texts[u.id], out.shown[u.id] = unit_text(u), unit_sentence(u)
    return out


def passage_sources(ctx: Any) -> Any:
    """The units' source texts for a graph built from a set's triples, which keeps no documents:
    the sentence of each unit's passage (its ``doc``; the title counts as its first sentence)
    that shares the most words with the unit. The service gives a unit the lines of the
    document it was read from (:func:`kgservice.answer.retrieval_only.unit_sources`); a MuSiQue
    triple has no lines, and its whole paragraph would stand in for a sentence: on MuSiQue's
    whole questions, many words long, it lifted *Brooklyn Nets [started playing in] 2012* by
    its article's other sentences (scripts/eval/RESULTS.md, "Ties, the pool and a name taken
    apart")."""
    from kgservice.answer.shape import words

    sentences = {p.id: [p.title, *_SENTENCE.split(p.text)] for p in ctx.ds.passages}

    def stated(u: Any) -> str:
        own = words(" ".join([u.subject, u.predicate] + [a.node or a.literal or "" for a in u.args]))
        return max(sentences[u.doc], key=lambda s: len(words(s) & own))

    return lambda units: {u.id: stated(u) for u in units if u.doc in sentences}


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def hit(a: Asked, ids: list[str]) -> bool:
    """A gold unit among ``ids``: a gold fact held in its text (demo, notes), or its id (MuSiQue)."""
    for uid in ids:
        text = a.texts.get(uid, "")
        if uid in a.gold or (a.set not in ID_GOLD and any(g in text for g in a.gold)):
            return True
    return False


def gold_rank(a: Asked, ids: list[str]) -> int | None:
    """The 1-based place of the first gold unit in ``ids`` (the answer's whole ranked pool), or
    None when no gold unit is in it: tells a miss whose answer never reached the ranking from
    one ranked too low."""
    for i, uid in enumerate(ids):
        if hit(a, [uid]):
            return i + 1
    return None


def answered(q: dict[str, Any], variant: str = SHIPPED) -> bool:
    """One question of a ``--json`` file: answerable, a gold unit in its top 3 and not "not in the
    graph"; off-topic, "not in the graph". (The files keep the shipped variant's top 3.)

    >>> answered({"answerable": True, "gold": ["g"], "top3": ["x", "g"], "verdict": {"3": ["strong", "", []]}})
    True
    >>> answered({"answerable": False, "gold": [], "top3": ["x"], "verdict": {"3": ["partial", "", []]}})
    False
    >>> answered({"set": "hotpotqa", "answerable": True, "gold": [], "top3": ["x"], "verdict": {"3": ["weak", "", []]}})
    True
    """
    found = q["verdict"][variant][0] != "none"
    if not q["answerable"]:
        return not found
    if q.get("set") in NO_GOLD:
        return found  # no gold: only a refusal is scored (the false-abstention proxy)
    return found and bool(set(q["gold"]) & set(q["top3"]))


def compare(before: Path, after: Path) -> list[str]:
    """Two ``--json`` runs of one graph question by question (answered by
    :func:`answered`), per group (set and kind): better / same / worse and the sign test's p
    (:func:`scripts.eval.paired.sign_test`), and which questions changed. Only MuSiQue's
    and 2Wiki's questions carry gold unit ids; demo and notes are compared by their verdict alone."""
    from scripts.eval.paired import sign_test

    a, b = json.loads(before.read_text("utf-8")), json.loads(after.read_text("utf-8"))
    out = []
    for graph, qs in a.get("questions", {}).items():
        other = {(q["set"], q["kind"], q["q"]): q for q in b.get("questions", {}).get(graph, [])}
        groups: dict[str, list[tuple[bool, bool, str]]] = {}
        for q in qs:
            if q["set"] not in ID_GOLD + NO_GOLD and q["answerable"]:
                continue  # gold facts, not ids: the floor run's own table counts them
            twin = other.get((q["set"], q["kind"], q["q"]))
            if twin is None:
                continue
            groups.setdefault(f"{graph}: {q['set']}" + (f" ({q['kind']})" if q["answerable"] else ""), []).append(
                (answered(q), answered(twin), q["q"]))
        for name, rows in groups.items():
            up = [r[2] for r in rows if r[1] and not r[0]]
            down = [r[2] for r in rows if r[0] and not r[1]]
            out.append(f"{name}: {sum(r[0] for r in rows)} -> {sum(r[1] for r in rows)} of {len(rows)}; "
                       f"better / same / worse {len(up)} / {len(rows) - len(up) - len(down)} / {len(down)} "
                       f"(p {sign_test(len(up), len(down)):.2f})")
            out += [f"    + {q}" for q in up] + [f"    - {q}" for q in down]
    return out


# -- graphs --------------------------------------------------------------------------------------

def _digest(paths: list[Path]) -> str:
    h = hashlib.sha1()
    for p in sorted(paths):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def _graph_code() -> list[Path]:
    """The code that turns these files into a graph (the lexicon and its resolution, the unit
    parser, the extraction and the rules extractor): part of the cache key, so a graph built
    before a change to them is not reused (a key of the files alone served graphs built before
    predicates were read by base form)."""
    pkg = ROOT / "kgservice"
    return [f for d in ("families", "notation", "extraction") for f in sorted((pkg / d).glob("*.[pj]*"))
            if f.suffix in (".py", ".json")] + [pkg / "llm" / "rules.py"]


def text_graph(name: str, unit_dirs: list[Path], text_dirs: list[Path]) -> Any:
    """A knowledge base of unit files and texts (texts through ``kgoffline/rules``), cached
    under ``KG_EVAL_DIR`` by the files' content."""
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase
    from scripts.eval.harness import CACHE, building

    files = [f for d in unit_dirs + text_dirs for f in sorted(d.iterdir()) if f.is_file()]
    work = CACHE / f"answers-{name}-{_digest(files + _graph_code())}"
    with building(work):  # two runs at once built one demo graph twice over and disagreed (19 vs 20)
        kb = KnowledgeBase(Settings(data_dir=work / "kg", embedder="default", llm_model="kgoffline/rules"))
        marker = work / "built"
        if not marker.exists():
            for d in unit_dirs:
                kb.ingest_units(kb.parse_unit_files(sorted(d.glob("*.units"))))
            for d in text_dirs:
                kb.ingest_text(sorted(d.iterdir()))
            marker.write_text("ok")
    return kb


def musique_questions(ctx: Any) -> list[tuple[str, list[str], str]]:
    """(question, gold unit ids, kind) for MuSiQue: each whole question (kind ``multi-hop``)
    and its first hop alone (``first hop``); gold = the units of the step's supporting passage
    whose text holds the step's answer or an alias. A step with no such unit is left out (the
    extractor lost its answer: no ranking can show it) and counted."""
    from scripts.eval.dataset import MUSIQUE_DIR

    raw = json.loads((MUSIQUE_DIR / "musique_train.json").read_text("utf-8"))
    corpus = json.loads((MUSIQUE_DIR / "musique_train_corpus.json").read_text("utf-8"))
    index = {(p["title"], p["text"]): f"m{i:04d}" for i, p in enumerate(corpus)}
    units_of: dict[str, list[str]] = {}
    for uid, pids in ctx.unit_passages.items():
        for pid in pids:
            units_of.setdefault(pid, []).append(uid)
    texts = {u.id: unit_text(u) for u in ctx.kb.store.iter_units()}
    out = []
    for q in raw:
        steps = q["question_decomposition"]
        for kind, step, text, answers in (
                ("multi-hop", steps[-1], q["question"], [q["answer"], *q.get("answer_aliases", [])]),
                ("first hop", steps[0], steps[0]["question"], [steps[0]["answer"]])):
            para = q["paragraphs"][step["paragraph_support_idx"]]
            pid = index[(para["title"], para["paragraph_text"])]
            keys = [" ".join(tokens(a)) for a in answers if tokens(a)]
            gold = [u for u in units_of.get(pid, []) if u in texts and any(k in " ".join(tokens(texts[u])) for k in keys)]
            out.append((text, gold, kind))
    return out


AUDITED = SETS / "musique-gold-audited.json"
ANSWER_LABELS = SETS / "answer-level-read.json"  # the answer-level read of the top 3 (--gold answers)
# read gold for 2Wiki's first hops, by the --floor-data file's name (the haystack sets give the
# questions' passages the same ids and triples: one gold per extraction)
TWOWIKI_GOLD = {f"2wiki{size}-{g}.json": SETS / f"2wiki-gold-{g}.json"
                for size in ("", "-haystack") for g in ("spacy", "rules")}
# the sets whose gold is unit ids (the rest: gold facts matched in a unit's words)
ID_GOLD = ("musique", "2wiki")
# the sets asked with no gold at all: an answerable question counts as answered unless refused
# (a proxy for false abstentions, :func:`answered`)
NO_GOLD = ("hotpotqa",)
# read gold for MuSiQue over another graph of its passages, by the --floor-data file's name
AUDITED_BY_DATA = {"musique-spacy.json": SETS / "musique-gold-audited-spacy.json",
                   "musique-rules.json": SETS / "musique-gold-audited-rules.json"}


def audited_file(musique_data: Path | None) -> Path:
    """The read gold for the graph being scored: the GPT-3.5 graph's, or the one kept for the
    ``musique_data`` file's name (the spaCy graph's, the rules graph's); a graph nobody labelled
    is refused (its unit ids name other triples). A file picked by name alone could still be
    another graph's under that name: :func:`audited_first_hops` refuses a gold unit whose triple
    is not the one it was read as."""
    if musique_data is None:
        return AUDITED
    if musique_data.name not in AUDITED_BY_DATA:
        raise GoldError(f"--gold audited: no read gold for {musique_data.name} "
                        f"(there is for musique.json and {', '.join(AUDITED_BY_DATA)})")
    return AUDITED_BY_DATA[musique_data.name]


class GoldError(ValueError):
    """A gold file that does not fit the graph it is asked to score (bad input: exit 2)."""


def twowiki_gold_file(data: Path | None) -> Path:
    """The read gold for a 2Wiki graph, by its set file's name; any other graph is refused
    (its unit ids would name other triples).

    >>> twowiki_gold_file(Path("x/2wiki-haystack-rules.json")).name
    '2wiki-gold-rules.json'
    """
    if data is None or data.name not in TWOWIKI_GOLD:
        raise GoldError(f"--floor-set 2wiki: needs --floor-data naming one of {', '.join(TWOWIKI_GOLD)} "
                        f"(got {data.name if data else 'none'})")
    return TWOWIKI_GOLD[data.name]


def audited_first_hops(ctx: Any, doc: dict[str, Any]) -> tuple[list[tuple[str, list[str], str]], list[tuple[str, str]]]:
    """MuSiQue's first hops with read gold (``answer_sets/musique-gold-audited.json``): the
    mechanical gold of :func:`musique_questions` counts every unit holding the answer's words,
    stating it or not and about the named thing or not, so a hit there may be no answer. Gives
    (step, stored gold unit ids, ``first hop``) for each step with a stating unit, and
    (question id, reason) for the steps left out. A gold id merged into another passage's unit
    at ingest (duplicate triples) is read as the stored unit of its passage with its text; an
    id that is not a unit of the step's passage is refused (:class:`GoldError` naming it)."""
    if doc.get("kind") != "first hop" or not isinstance(doc.get("questions"), list):
        raise GoldError("audited gold: expected kind 'first hop' and a list of questions")
    from scripts.eval.dataset import unit_id

    triples = {unit_id(p.id, n): " ".join(" ".join(t).lower().split())
               for p in ctx.ds.passages for n, t in enumerate(p.triples)
               if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t)}
    texts = {u.id: unit_text(u) for u in ctx.kb.store.iter_units()}
    out: list[tuple[str, list[str], str]] = []
    left: list[tuple[str, str]] = []
    for q in doc["questions"]:
        qid, pid, gold = q.get("id", "?"), q.get("passage", ""), q.get("gold", [])
        if not gold:
            left.append((qid, q.get("reason", "no stating unit")))
            continue
        stored = []
        for g, seen in zip(gold, q.get("gold_text") or [None] * len(gold)):
            n = g.rpartition(".t")[2]
            if not n.isdigit() or unit_id(pid, int(n)) != g or g not in triples:
                raise GoldError(f"audited gold: question {qid}: {g!r} is not a unit of passage {pid!r}")
            if seen is not None and " ".join(seen.replace(" | ", " ").lower().split()) != triples[g]:
                raise GoldError(f"audited gold: question {qid}: {g!r} was read as {seen!r}, "
                                "this graph holds other words: not the graph the gold was read on")
            if g in texts:
                stored.append(g)
            else:
                stored += [u for u, ps in ctx.unit_passages.items() if pid in ps and texts.get(u) == triples[g]]
        if not stored:
            left.append((qid, "its stating units are not in the store"))
            continue
        out.append((q["step"], sorted(set(stored)), "first hop"))
    return out, left


# -- report ---------------------------------------------------------------------------------------

def summary(asked: list[Asked], f: float) -> dict[str, Any]:
    """Per set (and kind): answerable questions, with a gold unit in the top 3 (not abstained),
    the retrieval's own top 3 for comparison, false abstentions; off-topic: abstentions."""
    groups: dict[str, list[Asked]] = {}
    for a in asked:
        groups.setdefault(a.set + (f" ({a.kind})" if a.kind and a.answerable else ""), []).append(a)
    out: dict[str, Any] = {}
    for name, qs in groups.items():
        ans = [a for a in qs if a.answerable]
        off = [a for a in qs if not a.answerable]
        out[name] = {
            "n": len(qs),
            "top3": sum(hit(a, a.top(f)) and a.relevance[f].found for a in ans),
            "top3_retrieval": sum(hit(a, a.retrieval) for a in ans),
            "false_abstain": sum(not a.relevance[f].found for a in ans),
            "abstain_offtopic": sum(not a.relevance[f].found for a in off),
            "answerable": len(ans), "offtopic": len(off),
        }
    return out


def prf(asked: list[Asked], f: float) -> tuple[float, float, float]:
    """(abstention precision, recall, false-abstention rate) over these questions."""
    abst = [a for a in asked if not a.relevance[f].found]
    tp = sum(not a.answerable for a in abst)
    off = sum(not a.answerable for a in asked)
    ans = sum(a.answerable for a in asked)
    return (100.0 * tp / len(abst) if abst else 100.0, 100.0 * tp / off if off else 100.0,
            100.0 * (len(abst) - tp) / ans if ans else 0.0)


def main(sets: list[str], show: bool = False, json_path: Path | None = None, musique_data: Path | None = None,
         gold: str = "mechanical", labels: Path = ANSWER_LABELS, unlabelled_out: Path | None = None) -> int:
    """Every variant on the named sets (``demo``, ``notes``, ``musique``: all three when none;
    ``2wiki``: :func:`twowiki_asked`, its graph the ``musique_data`` file, read gold only), a
    table per graph; ``show`` prints every question's top 3 and verdict (shipped variant).
    ``musique_data``: MuSiQue's questions over another graph of its passages (a set file in the
    generic shape, :func:`scripts.eval.dataset.load`; its passages must be MuSiQue's, in order).
    ``gold="audited"``: MuSiQue's first hops are scored against the read gold of
    :func:`audited_file` (:func:`audited_first_hops`: the GPT-3.5 graph's, or the spaCy or rules
    graph's for ``musique-spacy.json`` / ``musique-rules.json``), the whole questions keep the
    mechanical gold. ``gold="answers"``: the answer-level read (:mod:`scripts.eval.answer_gold`,
    ``labels``) beside the unit-level one (the read gold where the graph has one), over demo,
    notes and *every* MuSiQue first hop (whole questions are not asked; the shipped variant
    only); ``unlabelled_out``: write the run's unlabelled top-3 units there instead of scoring."""
    answer_level = gold == "answers"
    if answer_level and (musique_data is None or musique_data.name in AUDITED_BY_DATA):
        gold = "audited"
    twowiki = "2wiki" in sets
    hotpot = "hotpotqa" in sets
    if hotpot and (len(sets) > 1 or musique_data is None):
        raise GoldError("--floor-set hotpotqa: alone, with --floor-data naming a HotpotQA graph's set file")
    if hotpot:
        audited = None
    elif twowiki:
        if gold != "audited":
            raise GoldError("--floor-set 2wiki: its first hops have read gold only (--gold audited)")
        if "musique" in sets:
            raise GoldError("--floor-set 2wiki and musique: one --floor-data, one set at a time")
        audited = twowiki_gold_file(musique_data)
    else:
        audited = audited_file(musique_data) if gold == "audited" else None
    a = argparse.Namespace(demo="demo" in sets or not sets, notes="notes" in sets or not sets,
                           musique="musique" in sets or not sets, show=show, json=json_path)
    floors = (SHIPPED,) if answer_level else VARIANTS
    extra: dict[str, list[Asked]] = {}  # first hops with no unit-level gold, for the answer-level read only
    spec = json.loads((SETS / "demo.json").read_text("utf-8"))
    graphs: dict[str, list[Asked]] = {}
    kbs = []
    if a.demo or a.notes:
        demo = ROOT / "kgservice" / "demo"
        if a.demo:
            kb = text_graph("demo", [demo / "units"], [demo / "texts"])
            kbs.append(kb)
            graphs["demo"] = [_answers(ask(kb, "demo", x["q"], True, x["gold"], floors), x["gold"])
                              for x in spec["demo"]] + offtopic_asked(kb, floors, leave_out="near-musique")
        if a.notes:
            kb = text_graph("notes", [], [SETS / "notes"])
            kbs.append(kb)
            graphs["notes"] = [_answers(ask(kb, "notes", x["q"], True, x["gold"], floors), x["gold"])
                               for x in spec["notes"]]
    if a.musique:
        from scripts.eval.dataset import load_musique
        from scripts.eval.harness import build

        if musique_data is not None:
            from scripts.eval.dataset import load

            ctx = build(load(musique_data))
        else:
            ctx = build(load_musique())
        qs = musique_questions(ctx)
        if audited is not None:
            read, left = audited_first_hops(ctx, json.loads(audited.read_text("utf-8")))
            qs = [q for q in qs if q[2] != "first hop"] + read
            print(f"musique: audited gold, {len(read)} first hops with a stating unit; {len(left)} left out:")
            for qid, why in left:
                print(f"  - {qid}: {why}")
        lost = [q for q in qs if not q[1]]
        print(f"musique: {len(lost)} of {len(qs)} steps have no unit holding their answer (left out)")
        src = passage_sources(ctx)
        offtopic = offtopic_asked(ctx.kb, floors, src, leave_out="near-demo")
        if answer_level:
            unit_gold = {q: g for q, g, kind in qs if kind == "first hop"}
            hops = [_answers(ask(ctx.kb, "musique", step, True, unit_gold.get(step, []), floors, "first hop", src),
                             [ans]) for step, ans in first_hop_answers()]
            graphs["musique"] = [h for h in hops if h.gold] + offtopic
            extra["musique"] = [h for h in hops if not h.gold]
        else:
            graphs["musique"] = [ask(ctx.kb, "musique", q, True, g, floors, kind, src) for q, g, kind in qs if g] + offtopic
    if twowiki:
        graphs["2wiki"] = twowiki_asked(musique_data, audited, floors)
    if hotpot:
        assert musique_data is not None
        graphs["hotpotqa"] = hotpot_asked(musique_data, floors)
    doc: dict[str, Any] = {}
    for gname, asked in graphs.items():
        print(f"\n## {gname}")
        print("| variant | " + " | ".join(summary(asked, floors[0])) + " | abstention precision / recall / false % |")
        for f in floors:
            s = summary(asked, f)
            cells = []
            for name, v in s.items():
                if v["answerable"]:
                    cells.append(f"top 3 {v['top3']}/{v['answerable']} (retrieval {v['top3_retrieval']}), "
                                 f"abstained {v['false_abstain']}")
                else:
                    cells.append(f"abstained {v['abstain_offtopic']}/{v['offtopic']}")
            p, r, fa = prf(asked, f)
            print(f"| {f} | " + " | ".join(cells) + f" | {p:.0f} / {r:.0f} / {fa:.1f} |")
        doc[gname] = {str(f): {"summary": summary(asked, f), "prf": prf(asked, f)} for f in floors}
        if a.show:
            for x in asked:
                r = x.relevance[SHIPPED]
                mark = ("HIT " if hit(x, x.top(SHIPPED)) else "miss") if x.answerable else "off "
                print(f"- [{mark}] {r.label}: {r.reason} | {x.question}")
                if r.found or x.answerable:
                    for uid in x.top(SHIPPED):
                        print(f"      {uid}: {x.texts.get(uid, '')[:100]}")
                    for uid in x.not_listed(SHIPPED):
                        print(f"      (not listed: shares nothing with the question, or the floor read it as another thing) {uid}: {x.texts.get(uid, '')[:100]}")
    if a.json:
        doc["questions"] = {g: [{"set": x.set, "kind": x.kind, "q": x.question, "answerable": x.answerable,
                                 "gold": x.gold, "top3": x.top(SHIPPED), "retrieval_top3": x.retrieval,
                                 "not_listed": x.not_listed(SHIPPED),
                                 "gold_rank": {f: gold_rank(x, r) for f, r in x.rankings.items()}, "pool": len(x.ranked),
                                 "verdict": {str(f): [r.strength, r.reason, list(r.missing)] for f, r in x.relevance.items()}}
                                for x in asked] for g, asked in graphs.items()}
        a.json.write_text(json.dumps(doc, indent=1, ensure_ascii=False), "utf-8")
    for kb in kbs:
        kb.close()
    if answer_level:
        return answer_report(graphs, extra, musique_data, labels, unlabelled_out)
    return 0



def offtopic_asked(kb: Any, floors: tuple[str, ...], src: Any = None, leave_out: str | None = None) -> list[Asked]:
    """The off-topic questions (``offtopic.json``) asked of ``kb``; ``leave_out``: the kind of
    near miss written for another graph (the demo's "near-musique" ones, MuSiQue's "near-demo"
    ones), none for a graph of another kind (2Wiki, HotpotQA: all 36)."""
    off = json.loads((SETS / "offtopic.json").read_text("utf-8"))["questions"]
    return [ask(kb, "off-topic", x["q"], False, [], floors, x["kind"], src) for x in off if x["kind"] != leave_out]


def twowiki_asked(data: Path, gold_file: Path, floors: tuple[str, ...]) -> list[Asked]:
    """2Wiki's first hops with read gold (:func:`audited_first_hops`, the same loader and checks
    as MuSiQue's) and all 36 off-topic questions (none is about 2Wiki's films and people; the
    near-MuSiQue ones ask 2Wiki's shapes of invented names), asked of the graph of ``data``."""
    from scripts.eval.dataset import load
    from scripts.eval.harness import build

    ctx = build(load(data))
    gold = json.loads(gold_file.read_text("utf-8"))
    read, left = audited_first_hops(ctx, gold)
    print(f"2wiki: read gold ({gold_file.name}), {len(read)} first hops with a stating unit; {len(left)} left out "
          "(no gold in this graph):")
    for qid, why in left:
        print(f"  - {qid}: {why}")
    answers = {q["step"]: q["answer"] for q in gold["questions"]}
    src = passage_sources(ctx)
    return [_answers(ask(ctx.kb, "2wiki", q, True, g, floors, kind, src), [answers[q]]) for q, g, kind in read] + \
        offtopic_asked(ctx.kb, floors, src)


def hotpot_asked(data: Path, floors: tuple[str, ...]) -> list[Asked]:
    """A HotpotQA graph (``data``, a set file of HotpotQA's passages, e.g. ``hotpotqa-spacy.json``):
    all 36 off-topic questions, and the set's 100 whole questions as answerable with no gold
    (kind ``whole, no gold``): HotpotQA has no unit gold, so only their refusals are scored, a
    proxy for false abstentions, and their top-3 column is empty by construction."""
    from scripts.eval.dataset import load
    from scripts.eval.harness import build

    ctx = build(load(data))
    src = passage_sources(ctx)
    return [ask(ctx.kb, "hotpotqa", q.question, True, [], floors, "whole, no gold", src) for q in ctx.ds.questions] + \
        offtopic_asked(ctx.kb, floors, src)


def _answers(a: Asked, answers: list[str]) -> Asked:
    a.answers = list(answers)
    return a


def first_hop_answers() -> list[tuple[str, str]]:
    """(first step, its answer) of each MuSiQue question, in the set's order."""
    from scripts.eval.dataset import MUSIQUE_DIR

    raw = json.loads((MUSIQUE_DIR / "musique_train.json").read_text("utf-8"))
    return [(q["question_decomposition"][0]["question"], q["question_decomposition"][0]["answer"]) for q in raw]


def graph_key(name: str, musique_data: Path | None) -> str:
    """The labels' name for a graph: ``demo``, ``notes``, ``musique-gpt`` (the GPT-3.5 triples)
    or ``musique-<file stem without 'musique-'>`` for ``--floor-data``.

    >>> graph_key("musique", None), graph_key("musique", Path("x/musique-rules.json")), graph_key("demo", None)
    ('musique-gpt', 'musique-rules', 'demo')
    """
    if name != "musique":
        return name
    return "musique-gpt" if musique_data is None else "musique-" + musique_data.stem.removeprefix("musique-")


def answer_report(graphs: dict[str, list[Asked]], extra: dict[str, list[Asked]], musique_data: Path | None,
                  labels: Path, unlabelled_out: Path | None) -> int:
    """The answer-level read of a run (:mod:`scripts.eval.answer_gold`) beside the unit-level
    gold, per set; or, with ``unlabelled_out``, the run's unlabelled top-3 units written there."""
    from scripts.eval import answer_gold

    doc = json.loads(labels.read_text("utf-8")) if labels.exists() else {"rows": []}
    run, unit = [], []
    for g, asked in graphs.items():
        qs = [x for x in asked + extra.get(g, []) if x.answerable]
        run += answer_gold.rows(graph_key(g, musique_data), qs, SHIPPED)
        unit += [(bool(x.gold), hit(x, x.top(SHIPPED)) and x.relevance[SHIPPED].found) for x in qs]
    if unlabelled_out is not None:
        todo = answer_gold.unlabelled(run, doc)
        unlabelled_out.write_text(json.dumps({"rules": answer_gold.RULES, "rows": todo}, indent=1,
                                             ensure_ascii=False) + "\n", "utf-8")
        print(f"answer-level read: {sum(len(r['units']) for r in todo)} unlabelled top-3 units of "
              f"{len(todo)} questions written to {unlabelled_out}")
        return 0
    try:
        scored = answer_gold.score(run, doc)
    except answer_gold.LabelError as e:
        raise GoldError(str(e)) from e
    print("\n## answer-level read (labels: " + labels.name + ")")
    print("| graph: set | answerable | answer-level: answers / partly only / abstained | "
          "unit-level gold: questions, hits | on those questions, answer-level answers (with partly) |")
    groups: dict[str, list[tuple[dict[str, Any], tuple[bool, bool]]]] = {}
    for r, u in zip(scored, unit):
        groups.setdefault(f"{r['graph']}: {r['set']}", []).append((r, u))
    for name, rs in groups.items():
        with_gold = [(r, u) for r, u in rs if u[0]]
        print(f"| {name} | {len(rs)} | {sum(r['verdict'] == 'answers' for r, _ in rs)} / "
              f"{sum(r['verdict'] == 'partly' for r, _ in rs)} / {sum(r['verdict'] == 'abstained' for r, _ in rs)} | "
              f"{len(with_gold)}, {sum(u[1] for _, u in with_gold)} | "
              f"{sum(r['verdict'] == 'answers' for r, _ in with_gold)} "
              f"({sum(r['verdict'] in ('answers', 'partly') for r, _ in with_gold)}) |")
    print("\nquestions whose verdicts part (unit-level read gold vs answer-level read):")
    for name, rs in groups.items():
        for r, (has, uhit) in rs:
            ahit = r["verdict"] == "answers"
            if has and (uhit != ahit or (not uhit and r["verdict"] == "partly")):
                print(f"  {name}: unit {'hit' if uhit else 'miss'}, answer {r['verdict']}: {r['q']}")
                for u, lab in zip(r["units"], r["labels"]):
                    print(f"      [{lab}] {u['id']}: {u['text'][:110]}")
            elif not has and r["verdict"] in ("answers", "partly"):
                print(f"  {name}: no unit-level gold, answer {r['verdict']}: {r['q']}")
                for u, lab in zip(r["units"], r["labels"]):
                    print(f"      [{lab}] {u['id']}: {u['text'][:110]}")
    return 0

