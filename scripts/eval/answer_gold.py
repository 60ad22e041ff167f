"""Answer-level read gold for the no-model answer's top 3 (``answers.py --floor --gold answers``).

The unit-level read gold (``answer_sets/musique-gold-audited*.json``) counts a question as
answered only when a stating unit *of the step's supporting passage* is in the top 3; a user does
not care which passage the answering unit comes from. Here a reader labels, per question, each
of the top-3 units the answer actually showed (its sentence as the user sees it), against the
question and its gold answer string(s), blind to any score:

* ``answers`` — the unit states the gold answer as the answer to this question (other words
  allowed);
* ``partly`` — it states it, but needs another unit to be read as the answer, or is ambiguous;
* ``no`` — anything else.

A question counts as answered when it was not abstained on and one of its top 3 is labelled
``answers`` ("partly" is reported apart). The labels are keyed by (graph, question, unit id) and
hold the unit's text: a run whose top 3 holds a unit nobody labelled is **refused** (listed as
unlabelled, never scored as a miss or a hit), and so is a labelled id whose text is not the one
read (another graph under the same name). ``--answers-unlabelled FILE`` writes just the
unlabelled units of a run, blind and shuffled, to label and append (``--answers-merge``).
"""

from __future__ import annotations

import random
from typing import Any

LABELS = ("answers", "partly", "no")
RULES = [
    "Read each row alone: the question, its gold answer string(s), and the unit as the no-model answer shows it.",
    "answers: the unit states the gold answer (possibly in other words: an alias, a fuller or shorter name of the "
    "same thing) as the answer to this question, about the thing the question asks about.",
    "partly: the unit states the gold answer but needs another unit to be read as the answer to this question "
    "(e.g. it names the answer about a neighbouring thing, or the relation is only near the asked one), or it is "
    "ambiguous whether it answers (e.g. a plausible reading of a vague question).",
    "no: the unit does not state the gold answer, or states it about something else or in another relation "
    "(the answer's words merely occurring is not enough).",
    "Units are labelled on their own: which passage a unit comes from, the other units of the row, and whether the "
    "system abstained are not looked at; no score, ranking file or hit/miss marking is looked at before the labels "
    "are committed.",
]


class LabelError(ValueError):
    """A labels file that does not fit the run it is asked to score (bad input: exit 2)."""


def rows(graph: str, asked: list[Any], variant: str) -> list[dict[str, Any]]:
    """One row per answerable question asked of ``graph``: the question, its gold answer
    strings and the units (of its top 3) the no-model answer showed in ``variant`` (ids and sentences),
    whether it abstained. (``asked``: :class:`scripts.eval.floor_eval.Asked`.)"""
    return [{"graph": graph, "set": a.set, "kind": a.kind, "q": a.question, "answers": list(a.answers),
             "found": bool(a.relevance[variant].found),
             "units": [{"id": u, "text": a.shown.get(u, "")} for u in a.top(variant)]}
            for a in asked if a.answerable]


def index(doc: dict[str, Any]) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(graph, question, unit id) -> (text read, label) over a labels file; a label outside
    :data:`LABELS` or two different readings of one key are refused.

    >>> index({"rows": [{"graph": "g", "q": "q?", "units": [{"id": "u1", "text": "A is B.", "label": "no"}]}]})
    {('g', 'q?', 'u1'): ('A is B.', 'no')}
    """
    out: dict[tuple[str, str, str], tuple[str, str]] = {}
    for r in doc.get("rows", []):
        for u in r.get("units", []):
            key = (r["graph"], r["q"], u["id"])
            if u.get("label") not in LABELS:
                raise LabelError(f"labels: {key}: label {u.get('label')!r} is not one of {', '.join(LABELS)}")
            seen = (u["text"], u["label"])
            if key in out and out[key] != seen:
                raise LabelError(f"labels: {key} is labelled twice, differently: {out[key]} and {seen}")
            out[key] = seen
    return out


def unlabelled(run: list[dict[str, Any]], doc: dict[str, Any], seed: int = 53) -> list[dict[str, Any]]:
    """The rows of ``run`` reduced to their units with no label (empty ``label`` to fill), one
    row per question, shuffled (``seed``) and without whether the system abstained: a file to
    read blind. A labelled id whose text changed is refused (:func:`check_texts`).

    >>> run = [{"graph": "g", "set": "s", "kind": "", "q": "q?", "answers": ["B"], "found": True,
    ...         "units": [{"id": "u1", "text": "A is B."}, {"id": "u2", "text": "C is D."}]}]
    >>> doc = {"rows": [{"graph": "g", "q": "q?", "units": [{"id": "u1", "text": "A is B.", "label": "answers"}]}]}
    >>> unlabelled(run, doc)
    [{'graph': 'g', 'q': 'q?', 'answers': ['B'], 'units': [{'id': 'u2', 'text': 'C is D.', 'label': ''}]}]
    """
    known = index(doc)
    check_texts(run, known)
    out, seen = [], set()
    for r in run:
        units = [{"id": u["id"], "text": u["text"], "label": ""} for u in r["units"]
                 if (r["graph"], r["q"], u["id"]) not in known]
        if units and (r["graph"], r["q"]) not in seen:
            seen.add((r["graph"], r["q"]))
            out.append({"graph": r["graph"], "q": r["q"], "answers": r["answers"], "units": units})
    random.Random(seed).shuffle(out)
    return out


def check_texts(run: list[dict[str, Any]], known: dict[tuple[str, str, str], tuple[str, str]]) -> None:
    """Refuse a run whose unit, labelled under its id, shows other words than the ones read."""
    for r in run:
        for u in r["units"]:
            got = known.get((r["graph"], r["q"], u["id"]))
            if got is not None and got[0] != u["text"]:
                raise LabelError(f"labels: {r['graph']}: {r['q']!r}: {u['id']} was read as {got[0]!r}, "
                                 f"this run shows {u['text']!r}: not the graph the labels were read on")


def score(run: list[dict[str, Any]], doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Each row's answer-level verdict: ``answers`` (not abstained, a top-3 unit labelled
    answers), ``partly`` (not abstained, none answers, one partly), ``abstained``, or ``no``.
    Refuses (:class:`LabelError`, listing them) a run with any top-3 unit unlabelled.

    >>> doc = {"rows": [{"graph": "g", "q": "q?", "units": [{"id": "u1", "text": "A is B.", "label": "partly"}]}]}
    >>> run = [{"graph": "g", "set": "s", "kind": "", "q": "q?", "answers": ["B"], "found": True,
    ...         "units": [{"id": "u1", "text": "A is B."}]}]
    >>> [r["verdict"] for r in score(run, doc)]
    ['partly']
    """
    known = index(doc)
    check_texts(run, known)
    missing = [(r["graph"], r["q"], u["id"]) for r in run for u in r["units"]
               if (r["graph"], r["q"], u["id"]) not in known]
    if missing:
        shown = "; ".join(f"{g}: {q!r}: {u}" for g, q, u in missing[:5])
        raise LabelError(f"labels: {len(missing)} top-3 units of this run are unlabelled ({shown}"
                         f"{' …' if len(missing) > 5 else ''}); write them with --answers-unlabelled FILE, "
                         "label them and add them with --answers-merge FILE")
    out = []
    for r in run:
        labels = [known[(r["graph"], r["q"], u["id"])][1] for u in r["units"]]
        verdict = ("abstained" if not r["found"] else "answers" if "answers" in labels
                   else "partly" if "partly" in labels else "no")
        out.append({**r, "labels": labels, "verdict": verdict})
    return out


def merge(doc: dict[str, Any], new: list[dict[str, Any]]) -> dict[str, Any]:
    """The labels file with ``new`` labelled rows added (every unit needs a label; a key already
    read differently is refused by :func:`index`).

    >>> doc = merge({"rows": []}, [{"graph": "g", "q": "q?", "answers": ["B"],
    ...                             "units": [{"id": "u1", "text": "A is B.", "label": "answers"}]}])
    >>> len(doc["rows"])
    1
    """
    out = {**doc, "rows": [*doc.get("rows", []), *new]}
    index(out)
    return out
