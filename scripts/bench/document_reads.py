#!/usr/bin/env python
"""Document reads: what the document listing and an answer's source lines cost when the store
holds documents of realistic size, on the embedded store and on Neo4j, code trees side by side.

    python scripts/bench/document_reads.py [--docs 20] [--rounds 3] [--repeat 15]
        [--backends embedded,neo4j] --code old=/tmp/kg-old,new=.

Rows per (backend, tree), each from a fresh child process importing ``kgservice`` from that tree
and opening the same store (built once per backend by the first tree; the stored format is the
same for both):

* ``kb.documents()``: the listing (``kg docs list``, ``GET /v1/documents``, MCP, the web page);
* ``unit_sources``: the no-model answer's source lines for one unit of every document (the pool
  of an ask citing ``--docs`` documents): first call in the process, then warm;
* ``cited_sources``: the model path's citations (lines, snippet, page / section) of the same units;
* ``kb.ask``: the no-model answer (``hash:64`` embedder) to "What does topic K mention?", whose
  pool holds units of every document, different K in turn.

p50 of the wall time and of this process's CPU time per call (Neo4j's server CPU is not counted:
the transfer shows in the client's wall and CPU). Rounds alternate the trees' order; the ratio is
the median over rounds of old / new p50.

The documents are synthetic and seeded: document i has a text of 0.2-2 MB (sizes evenly spread,
seeded order) in the unit notation, 40 units ``{topic-K} [mentions] {d<i>-thing<j>}`` spread over
it between ``%`` comment lines of prose (random words from a 5,000-word vocabulary, ~100 chars a
line), ingested with ``mode="manual"``, then its record given format ``html`` and an original file, that
prose as an HTML page (about the text's size, kept as a converted page's is under
KG_DOC_TEXT_MAX_BYTES), written back as ``kg restore`` writes records: the stored records have the
shape of a converted HTML document without a model to extract them. A PDF's original compresses less than this HTML, so on Neo4j a store of
PDFs moves more bytes per whole-record read than measured here.

Neo4j: ``KG_BENCH_NEO4J_URI`` (default bolt://127.0.0.1:7688) and ``NEO4J_PASSWORD``; its
database is wiped. Results go to ``results/document_reads.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (puts the repository first on sys.path)

TOPICS = 5
UNITS_PER_DOC = 40
VOCAB = 5000


def doc_sizes(n: int, rng: random.Random) -> list[int]:
    sizes = [int(200_000 + (2_000_000 - 200_000) * i / max(n - 1, 1)) for i in range(n)]
    rng.shuffle(sizes)
    return sizes


def make_doc(i: int, size: int, rng: random.Random, words: list[str]) -> tuple[str, bytes]:
    """(the unit-notation text, the HTML original) of document ``i``, the text ~``size`` bytes."""
    prose: list[str] = []
    n = 0
    while n < size:
        line = " ".join(rng.choice(words) for _ in range(14))
        prose.append(line)
        n += len(line) + 3
    every = max(len(prose) // UNITS_PER_DOC, 1)
    lines = []
    for k, p in enumerate(prose):
        lines.append("% " + p)
        if k % every == 0 and k // every < UNITS_PER_DOC:
            j = k // every
            lines.append(f"{{topic-{j % TOPICS}}} [mentions] {{d{i}-thing{j}}}")
    page = "<html><head><title>doc %d</title></head><body>\n%s\n</body></html>\n" % (
        i, "\n".join(f"<p>{html.escape(p)}</p>" for p in prose))
    return "\n".join(lines) + "\n", page.encode("utf-8")


def settings_for(backend: str, data: Path):
    from kgservice.config import Settings

    over: dict = {"embedder": "hash:64", "vector_backend": "edge"}
    if backend == "neo4j":
        env = common.neo4j_env()
        over |= {"backend": "neo4j", "neo4j_uri": env["uri"], "neo4j_user": env["user"],
                 "neo4j_password": env["password"]}
    return Settings(data_dir=data, **over)


def build(backend: str, data: Path, docs: int, seed: int) -> dict:
    from kgservice.lifecycle.model import DocumentRecord
    from kgservice.service import KnowledgeBase

    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    rng = random.Random(seed)
    words = ["w%x" % rng.getrandbits(24) for _ in range(VOCAB)]
    text_bytes = orig_bytes = 0
    ids: list[str] = []
    with KnowledgeBase(settings_for(backend, data)) as kb:
        if backend == "neo4j":
            kb.store.write_statements("wipe_all")  # the benchmark's database only (tests.neo4j_helpers.wipe_all)
        for i, size in enumerate(doc_sizes(docs, rng)):
            text, page = make_doc(i, size, rng, words)
            text_bytes += len(text.encode())
            orig_bytes += len(page)
            did = f"doc{i:02d}.html"
            kb.ingest_document(did, text, mode="manual")
            # a unit document keeps no original: give its record the converted page's (format, file),
            # written as `kg restore` writes a record, so it is stored as a converted document's is
            rec = kb.document(did).model_copy(update={
                "format": "html", "original_z": DocumentRecord.pack_original(page, kb.settings.doc_text_max_bytes)})
            rec = rec.model_copy(update={"original_stored": rec.original_z is not None})
            kb.store.restore_lifecycle([rec], [], [])
            rec = kb.document(did)
            ids.append(sorted(rec.unit_lines)[len(rec.unit_lines) // 2])
            zt, zo = len(rec.text_z or ""), len(rec.original_z or "")
            print(f"  {did}: text {len(text) / 1e6:.2f} MB ({zt / 1e6:.2f} MB stored), original "
                  f"{len(page) / 1e6:.2f} MB ({zo / 1e6:.2f} MB stored), {rec.units} units", file=sys.stderr)
    (data / "bench-units.json").write_text(json.dumps(ids))
    return {"docs": docs, "text_mb": text_bytes / 1e6, "original_mb": orig_bytes / 1e6}


def timed(fn, repeat: int) -> dict:
    wall, cpu = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"p50_ms": common.pct(wall, 50) * 1000, "cpu_p50_ms": common.pct(cpu, 50) * 1000,
            "p95_ms": common.pct(wall, 95) * 1000}


def child(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(args.tree).resolve()))
    import kgservice
    from kgservice.answer.retrieval_only import unit_sources
    from kgservice.answer.sources import cited_sources
    from kgservice.service import KnowledgeBase

    assert Path(kgservice.__file__).resolve().is_relative_to(Path(args.tree).resolve()), kgservice.__file__
    data = Path(args.data)
    ids = json.loads((data / "bench-units.json").read_text())
    out: dict = {}
    with KnowledgeBase(settings_for(args.backend, data)) as kb:
        kb.documents()  # connection, schema check and imports out of the way
        c0, t0 = time.process_time(), time.perf_counter()
        first = unit_sources(kb.store, ids)
        out["unit_sources_first"] = {"p50_ms": (time.perf_counter() - t0) * 1000,
                                     "cpu_p50_ms": (time.process_time() - c0) * 1000}
        out["cited_docs"] = len({s for s in first})
        out["listing"] = timed(kb.documents, args.repeat)
        out["unit_sources"] = timed(lambda: unit_sources(kb.store, ids), args.repeat)
        out["cited_sources"] = timed(lambda: cited_sources(kb.parts, ids), args.repeat)
        qs = iter(range(10**6))
        kb.ask("What does topic-0 mention?")
        out["ask"] = timed(lambda: kb.ask(f"What does topic-{next(qs) % TOPICS} mention?"), args.repeat)
        res = kb.ask("What does topic-1 mention?")
        out["ask_cites"] = len(res.cited)
        out["sources_digest"] = hashlib.sha256(json.dumps(first, sort_keys=True).encode()).hexdigest()[:16]
    common.emit(out)


ROWS = [("listing", "kb.documents()"), ("unit_sources_first", "unit_sources, first"),
        ("unit_sources", "unit_sources, warm"), ("cited_sources", "cited_sources"), ("ask", "kb.ask (no model)")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--tree")
    ap.add_argument("--data")
    ap.add_argument("--backend", default="embedded")
    ap.add_argument("--docs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--seed", type=int, default=common.SEED)
    ap.add_argument("--backends", default="embedded,neo4j")
    ap.add_argument("--code", default="new=.")
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    trees = [(k, str(Path(v).resolve())) for k, v in (p.split("=", 1) for p in args.code.split(","))]
    rows: list[dict] = []
    built: dict[str, dict] = {}
    for backend in args.backends.split(","):
        data = common.WORK / f"document-reads-{backend}-{args.docs}"
        print(f"building {backend}: {args.docs} documents in {data}", file=sys.stderr)
        built[backend] = build(backend, data, args.docs, args.seed)
        print(f"  {built[backend]}", file=sys.stderr)
        for r in range(args.rounds):
            order = trees if r % 2 == 0 else trees[::-1]
            for label, tree in order:
                res = common.run_child(Path(__file__), ["--tree", tree, "--data", str(data), "--backend", backend,
                                                        "--repeat", str(args.repeat)])
                rows.append({"backend": backend, "tree": label, "round": r, **res})
                print(f"  round {r} {label}: " + ", ".join(f"{k} {res[k]['p50_ms']:.1f} ms" for k, _ in ROWS),
                      file=sys.stderr)
    labels = [k for k, _ in trees]
    for backend in built:
        mine = [x for x in rows if x["backend"] == backend]
        table_rows = []
        for key, name in ROWS:
            line: list = [name]
            for lab in labels:
                got = [x[key] for x in mine if x["tree"] == lab]
                line += [statistics.median(g["p50_ms"] for g in got), statistics.median(g["cpu_p50_ms"] for g in got)]
            if len(labels) == 2:
                ratios = []
                for r in range(args.rounds):
                    a = next(x[key] for x in mine if x["tree"] == labels[0] and x["round"] == r)
                    b = next(x[key] for x in mine if x["tree"] == labels[1] and x["round"] == r)
                    ratios.append(a["p50_ms"] / b["p50_ms"])
                line.append(statistics.median(ratios))
            table_rows.append(line)
        heads = ["read"] + [f"{lab} {m}" for lab in labels for m in ("ms", "cpu ms")]
        heads += [f"{labels[0]}/{labels[1]}"] if len(labels) == 2 else []
        info = built[backend]
        print()
        print(common.table(heads, table_rows, title=(
            f"{backend}: {info['docs']} documents, text {info['text_mb']:.1f} MB, originals {info['original_mb']:.1f} MB; "
            f"p50 over {args.repeat} calls, median of {args.rounds} rounds; load {os.getloadavg()[0]:.1f}")))
        digests = {x["tree"]: x["sources_digest"] for x in mine}
        cites = {x["tree"]: (x["cited_docs"], x["ask_cites"]) for x in mine}
        print(f"same source lines in every tree: {len(set(digests.values())) == 1}; "
              f"(units with sources, units an ask cites) per tree: {cites}")
    path = common.save("document_reads", rows, {"built": built, "args": vars(args)})
    print(f"results: {path}")


if __name__ == "__main__":
    main()
