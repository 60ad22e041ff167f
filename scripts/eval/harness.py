"""The retrieval eval: build a knowledge base from a dataset's triples, rank passages per
question with each method, report Recall@2/@5 overall and per hop count, and latency.

Every method ranks *passages*: a graph method scores nodes (or units), and a passage scores
the sum over the distinct nodes its units mention (HippoRAG's passage = node-incidence sum);
units map back to passages through their id (``scripts/eval/dataset.py``). All graph methods
start from the same entry nodes (kgservice.entry), so rows differ only in what they do next.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kgservice.config import Settings  # noqa: E402
from kgservice.entry import EntryFinder  # noqa: E402
from kgservice.families.lexicon import Lexicon  # noqa: E402
from kgservice.ids import is_literal_id  # noqa: E402
from kgservice.service import KnowledgeBase  # noqa: E402

from scripts.eval.dataset import Dataset, build_units  # noqa: E402
from scripts.eval.metrics import mean_recall  # noqa: E402

CACHE = Path(os.environ.get("KG_EVAL_DIR", Path.home() / ".cache" / "kgservice" / "eval"))


@dataclass
class Context:
    """Everything the methods share for one dataset: the KB and the unit/passage maps."""

    ds: Dataset
    kb: KnowledgeBase
    unit_passages: dict[str, list[str]]  # stored unit id -> passages it came from (duplicates merged)
    passage_nodes: dict[str, set[str]] = field(default_factory=dict)
    node_passages: dict[str, set[str]] = field(default_factory=dict)
    pids: list[str] = field(default_factory=list)
    pvecs: np.ndarray | None = None
    qvecs: dict[str, np.ndarray] = field(default_factory=dict)
    finder: EntryFinder | None = None
    nx_graph: Any = None
    build_info: dict[str, Any] = field(default_factory=dict)
    # (question id, what) -> a result several method rows share, computed once per context
    # (run.py's PPR fusion rows: kg full's retrieval and the PPR runs)
    memo: dict[tuple[str, str], Any] = field(default_factory=dict)


def _digest(obj: Any) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:12]


def _fingerprint(ds: Dataset, embedder: str) -> str:
    """The ingest cache's key: what the graph is built from (the passages' ids and triples),
    the families the lexicon gives their predicates (:func:`families_key`) and the embedder;
    the questions do not change the graph, so a subset of them reuses it, and so does another
    question set over the same passages that names this set's graph (``Dataset.graph``)."""
    h = _digest([[p.id, p.triples] for p in ds.passages] + [families_key(ds)])
    return f"{graph_name(ds.graph or ds.name)}-{embedder.replace(':', '_')}-{h}"


def families_key(ds: Dataset, lexicon: Lexicon | None = None) -> str:
    """A digest of the family (kind, base, inverse) the lexicon resolves for each of the set's
    predicates. The families decide the stored graph (which units spread and how far, which
    merge as duplicates), so a store built before a lexicon or resolution change must not be
    reused: keyed by the triples alone, the cache served graphs built before predicates were
    read by base form, and the figures measured on them were not the shipped code's."""
    lex = lexicon or Lexicon.load()
    preds = sorted({t[1].strip() for p in ds.passages for t in p.triples
                    if isinstance(t, list) and len(t) == 3 and isinstance(t[1], str)})
    return _digest([[x, *astuple(lex.resolve(x))] for x in preds])


def graph_name(name: str) -> str:
    """A set's name without the question-limit part :func:`scripts.eval.dataset.subset` adds
    (``musique-20q`` → ``musique``, ``musique-20q-sliced`` → ``musique-sliced``): ``--limit``
    alone keeps every passage, so it must reuse the whole set's ingest, not build its own.

    >>> graph_name("musique-20q"), graph_name("tiny-1q-sliced"), graph_name("musique-rules")
    ('musique', 'tiny-sliced', 'musique-rules')
    """
    return re.sub(r"-\d+q(?=-sliced$|$)", "", name)


def _passage_vectors_path(ds: Dataset, embedder: str) -> Path:
    """Passage vectors are keyed by the passages' text alone: a set that changes only the
    triples (another extractor over the same corpus) reuses them."""
    return CACHE / "passage-vectors" / f"{embedder.replace(':', '_')}-{_digest([[p.title, p.text] for p in ds.passages])}.npy"


@contextmanager
def building(work: Path) -> Iterator[None]:
    """One build of a cache directory at a time, across processes: two eval runs started
    together on one ``KG_EVAL_DIR`` built the same store at once (2026-12-07: one wrote the
    graph and failed on the vector store the other held; the other wrote the marker), and the
    second run measured a store with no vectors. The second now waits, then finds the marker.
    (Measuring from one store at once stays one process's: the embedded vector store refuses a
    second opener with its own message.)"""
    work.parent.mkdir(parents=True, exist_ok=True)
    with open(work.parent / f".{work.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build(ds: Dataset, embedder: str = "default", workdir: Path | None = None,
          log: Callable[[str], None] = print) -> Context:
    """Ingest the dataset's units into an embedded store (cached per dataset + embedder)."""
    work = workdir or CACHE / _fingerprint(ds, embedder)
    with building(work):
        return _build(ds, embedder, work, workdir is not None, log)


def _build(ds: Dataset, embedder: str, work: Path, own_dir: bool, log: Callable[[str], None]) -> Context:
    """:func:`build`, under the cache directory's lock."""
    settings = Settings(data_dir=work / "kg", embedder=embedder, vector_backend="edge")
    kb = KnowledgeBase(settings)
    marker = work / "built.json"
    if marker.exists():
        info = json.loads(marker.read_text())
    else:
        units, origin, skipped = build_units(ds, kb.lexicon)
        t0 = time.perf_counter()
        report = kb.ingest_units(units)
        dups = dict(getattr(report, "duplicates", {}) or {})
        unit_passages: dict[str, list[str]] = {}
        for uid, pid in origin.items():
            keep = dups.get(uid, uid)
            lst = unit_passages.setdefault(keep, [])
            if pid not in lst:
                lst.append(pid)
        info = {"units": len(units), "skipped_triples": skipped, "duplicates": len(dups),
                "nodes": kb.store.counts()["nodes"], "ingest_seconds": round(time.perf_counter() - t0, 1),
                "unit_passages": unit_passages}
        work.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps(info))
        log(f"built {info['units']} units ({skipped} triples skipped, {len(dups)} duplicates merged), "
            f"{info['nodes']} nodes in {info['ingest_seconds']} s -> {work}")
    # Two builds of one cache directory at once (before :func:`building` made them take turns)
    # could end with the marker written and the vectors owed: the racer that wrote the graph
    # failed on the vector store the other held, after the other had settled (2026-12-07: a
    # rules graph measured with 0 of 3,110 node vectors, pools of 0-3 units). Such a cache is
    # keyed by its data, not the code, so it outlives the fix; the store's note says what it
    # owes: pay it before measuring anything (one directory listing when nothing is owed).
    if owed := kb.settle_owed_vectors():
        log(f"embedded {owed} node vectors an earlier build of {work} owed")
    ctx = Context(ds, kb, {k: list(v) for k, v in info["unit_passages"].items()})
    ctx.build_info = {k: v for k, v in info.items() if k != "unit_passages"}
    units = {u.id: u for u in kb.store.iter_units()}
    for uid, pids in ctx.unit_passages.items():
        u = units.get(uid)
        if u is None:
            continue
        nodes = [u.subject_id] + [n for n in u.context_node_ids() if not is_literal_id(n)]
        for pid in pids:
            ctx.passage_nodes.setdefault(pid, set()).update(nodes)
            for n in nodes:
                ctx.node_passages.setdefault(n, set()).add(pid)
    ctx.pids = [p.id for p in ds.passages]
    pv = (work / "passages.npy") if own_dir else _passage_vectors_path(ds, embedder)
    if pv.exists():
        ctx.pvecs = np.load(pv)
    else:
        t0 = time.perf_counter()
        ctx.pvecs = kb.embedder.embed([f"{p.title}\n{p.text}" for p in ds.passages])
        pv.parent.mkdir(parents=True, exist_ok=True)
        np.save(pv, ctx.pvecs)
        log(f"embedded {len(ds.passages)} passages in {time.perf_counter() - t0:.1f} s")
    qs = [q.question for q in ds.questions]
    ctx.qvecs = dict(zip([q.id for q in ds.questions], kb.embedder.embed(qs))) if qs else {}
    from kgservice.answer.graph_words import stem_uses

    # as the service builds it (kgservice/parts.py): the units' stems say whether a word the
    # labels lack is a misspelling (kgservice/entry/spelling.py)
    ctx.finder = EntryFinder(kb.store, kb.embedder.embed, kb.vectors,
                             word_uses=lambda w: stem_uses(kb.parts.lexical_units.index(), w))
    return ctx


# -- passage ranking from scores --------------------------------------------------------------

def rank_passages(ctx: Context, node_scores: Mapping[str, float]) -> dict[str, float]:
    """Passage score = sum of the scores of the distinct nodes it mentions."""
    out: dict[str, float] = {}
    for n, s in node_scores.items():
        if s <= 0:
            continue
        for pid in ctx.node_passages.get(n, ()):
            out[pid] = out.get(pid, 0.0) + s
    return out


def unit_passages_scores(ctx: Context, units: Iterable[Any]) -> dict[str, float]:
    """Passage score = sum of the scores of its retrieved units (``RetrievedUnit``: ``id``,
    ``score``): how the project's retrieval ranks passages (the kg rows and the misses table)."""
    out: dict[str, float] = {}
    for u in units:
        for pid in ctx.unit_passages.get(u.id, ()):
            out[pid] = out.get(pid, 0.0) + u.score
    return out


def ordered(scores: Mapping[str, float]) -> list[str]:
    return [p for p, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def dense_scores(ctx: Context, qid: str) -> dict[str, float]:
    sims = ctx.pvecs @ ctx.qvecs[qid]
    return dict(zip(ctx.pids, sims.tolist()))


def fuse(graph: Mapping[str, float], dense: Mapping[str, float], weight: float) -> dict[str, float]:
    from kgservice.expansion.fusion import fuse_scores

    return fuse_scores(graph, dense, weight)


# -- report -----------------------------------------------------------------------------------------

def evaluate(ctx: Context, runs: Mapping[str, Mapping[str, list[str]]]) -> dict[str, Any]:
    """Recall@2/@5 per method, overall, per hop count and per question type."""
    gold = {q.id: q.gold for q in ctx.ds.questions}
    hops: dict[int, list[str]] = {}
    kinds: dict[str, list[str]] = {}
    for q in ctx.ds.questions:
        hops.setdefault(q.hop_count, []).append(q.id)
        kinds.setdefault(q.kind, []).append(q.id)
    table: dict[str, Any] = {}
    for method, run in runs.items():
        row = {"R@2": mean_recall(run, gold, 2), "R@5": mean_recall(run, gold, 5), "hops": {}, "types": {}}
        for key, groups in (("hops", hops), ("types", kinds)):
            for h, ids in sorted(groups.items()):
                g = {i: gold[i] for i in ids}
                row[key][h] = {"n": len(ids), "R@2": mean_recall(run, g, 2), "R@5": mean_recall(run, g, 5)}
        table[method] = row
    return table


def format_table(table: Mapping[str, Any], by: str = "hops") -> str:
    """The recall table, one column pair per hop count (``by="hops"``) or question type
    (``"types"``). No latency column: the one latency figure is the end-to-end block
    (:func:`scripts.eval.run.end_to_end_latency`), timed alike for every method it lists."""
    first = next(iter(table.values()))
    keys = sorted({h for r in table.values() for h in r[by]}, key=str)
    label = (lambda h: f"{h}-hop") if by == "hops" else str
    head = "| method | R@2 | R@5 | " + " | ".join(f"{label(h)} R@2 / R@5 (n={first[by][h]['n']})" for h in keys) + " |"
    lines = [head, "|" + "---|" * (3 + len(keys))]
    for m, r in table.items():
        cells = [f"{r[by][h]['R@2']:.1f} / {r[by][h]['R@5']:.1f}" if h in r[by] else "–" for h in keys]
        lines.append(f"| {m} | {r['R@2']:.1f} | {r['R@5']:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def unit_dense_scores(ctx: Context, qid: str) -> dict[str, float]:
    """Dense similarity of the question to each passage through its *units*: the best cosine
    between the question and the passage's unit texts ("subject predicate object"). Unit
    vectors are not stored by kgservice today; the harness embeds them once (cached)."""
    if getattr(ctx, "_uvecs", None) is None:
        work = CACHE / _fingerprint(ctx.ds, ctx.kb.settings.embedder)
        path = work / "units.npy"
        ids = sorted(ctx.unit_passages)
        if path.exists():
            vecs = np.load(path)
        else:
            units = {u.id: u for u in ctx.kb.store.get_units(ids)}
            texts = [f"{units[i].subject} {units[i].predicate} "
                     + " ".join(a.node or a.literal or "" for a in units[i].args) for i in ids]
            vecs = ctx.kb.embedder.embed(texts)
            np.save(path, vecs)
        rows: dict[str, list[int]] = {}
        for i, uid in enumerate(ids):
            for pid in ctx.unit_passages[uid]:
                rows.setdefault(pid, []).append(i)
        ctx._uvecs = (vecs, rows)  # type: ignore[attr-defined]
    vecs, rows = ctx._uvecs  # type: ignore[attr-defined]
    sims = vecs @ ctx.qvecs[qid]
    return {pid: float(sims[ix].max()) for pid, ix in rows.items()}


# -- why a gold passage is missed --------------------------------------------------------------

MISS_KINDS = ("top 5", "no node", "seeded, ranked below 5", "reached, ranked below 5", "not reached")


def miss_reason(rank: int | None, nodes: set[str], seeds: Mapping[str, float]) -> str:
    """Where a gold passage stands for one question, so a loss can be told apart: in the top 5;
    ``no node`` (no unit of the graph comes from it: the extractor's loss, nothing a retrieval
    can reach); ``seeded`` (one of its nodes is a seed of the spreading — entry or lexical
    seed — yet it ranks below 5); ``reached`` (a retrieved unit comes from it, below 5); ``not
    reached`` (it has nodes, but no retrieved unit comes from it: the second hop is lost).
    ``rank`` is the passage's 1-based rank among the passages the retrieval scored, ``None``
    when it scored none.

    >>> miss_reason(2, {"a"}, {}), miss_reason(None, set(), {"a": 1.0}), miss_reason(9, {"a"}, {"a": 1.0})
    ('top 5', 'no node', 'seeded, ranked below 5')
    >>> miss_reason(9, {"a"}, {"b": 1.0}), miss_reason(None, {"a"}, {"b": 1.0}), miss_reason(None, {"a"}, {"a": 1.0})
    ('reached, ranked below 5', 'not reached', 'seeded, ranked below 5')
    """
    if rank is not None and rank <= 5:
        return "top 5"
    if not nodes:
        return "no node"
    if nodes & set(seeds):
        return "seeded, ranked below 5"
    return "reached, ranked below 5" if rank is not None else "not reached"


def miss_table(rows: list[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """Counts of :func:`miss_reason` per question type, from (type, reason) rows, plus ``all``.

    >>> miss_table([("bridge", "top 5"), ("bridge", "no node"), ("3-hop", "top 5")])["all"]["top 5"]
    2
    """
    out: dict[str, dict[str, int]] = {"all": dict.fromkeys(MISS_KINDS, 0)}
    for kind, reason in rows:
        out.setdefault(kind, dict.fromkeys(MISS_KINDS, 0))[reason] += 1
        out["all"][reason] += 1
    return out
