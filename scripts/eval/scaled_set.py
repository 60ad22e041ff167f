"""A larger graph of an eval set's shape, for latency at ≥ 50k nodes: the set plus relabelled copies.

``python scripts/eval/scaled_set.py IN.json OUT.json [--copies 2]`` writes ``IN``'s passages and
questions and, for each copy k = 2 … copies + 1, every passage again (id ``<id>~k``) with every
triple's subject and object relabelled ``<label> <tag k>`` (a made-up word per copy: "Hank
Snow Vorlan"). The copies keep the set's degree distribution and vocabulary (every word of
the original is in them, so BM25 postings and the label index grow as they would with more
passages of the same kind); their labels are new nodes, so the node count grows with each
copy. The questions still have their gold in the original passages, so ``run.py --data OUT``
also measures recall with the copies as distractors.

>>> relabel("Hank Snow", 2)
'Hank Snow Vorlan'
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

TAGS = ["Vorlan", "Quesset", "Brimmor", "Taldrey", "Ostrevin", "Pellag"]


def relabel(label: str, k: int) -> str:
    return f"{label} {TAGS[(k - 2) % len(TAGS)]}"


def scaled(doc: dict, copies: int) -> dict:
    passages = list(doc["passages"])
    for k in range(2, copies + 2):
        for p in doc["passages"]:
            triples = [[relabel(t[0], k), t[1], relabel(t[2], k)] if isinstance(t, list) and len(t) == 3
                       and all(isinstance(x, str) for x in t) else t for t in p.get("triples", [])]
            passages.append({**p, "id": f"{p['id']}~{k}", "title": relabel(p.get("title", ""), k), "triples": triples})
    return {**doc, "name": f"{doc.get('name', 'set')}-x{copies + 1}", "passages": passages}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--copies", type=int, default=2)
    a = ap.parse_args(argv)
    if not 1 <= a.copies <= len(TAGS):
        print(f"--copies must be 1..{len(TAGS)}, got {a.copies}", file=sys.stderr)
        return 2
    try:
        doc = json.loads(a.src.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        print(f"{a.src}: {exc}", file=sys.stderr)
        return 2
    out = scaled(doc, a.copies)
    a.out.write_text(json.dumps(out, ensure_ascii=False), "utf-8")
    print(f"{a.out}: {len(out['passages'])} passages, {sum(len(p.get('triples', [])) for p in out['passages'])} triples")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
