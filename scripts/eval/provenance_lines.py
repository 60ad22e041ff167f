"""How well a text unit's recorded lines point at the sentence that states it: the chunk's lines
(what ingest recorded before) beside the sentence alignment (kgservice.extraction.align),
against lines found by hand.

Data: the units a capable model extracted, with hand-found lines: the five chunks of the four
test documents from the first recorded run (tests/data/documents-extraction.jsonl: each
chunk's lines and the reply; labels in tests/data/documents-model-lines.json) and two chunks of
GNU gzip's README from the first real-model run (tests/data/gzip-extraction.jsonl, labels in
tests/documents/test_align.py). The replies are aligned directly: no ingest, so a prompt
change does not touch the data.
The alignment's weights were chosen on the "tune" set (airports.docx and gzip exchange 6)
and are reported on the others.

    python3 -m scripts.eval.provenance_lines
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TUNE = {"airports.docx", "gzip#6"}


def _key(u: Any) -> tuple[str, str, str]:
    a = u.args[0]
    return u.subject, u.predicate, a.node or a.literal or ""


def cases() -> list[tuple[str, list[Any]]]:
    """Per set: (unit, chunk text, chunk lines, hand lines) for every unit of its replies."""
    from kgservice.convert.source import read_source
    from kgservice.extraction.schema import Extraction, to_units
    from kgservice.families import Lexicon
    from kgservice.llm.client import json_text
    from tests.documents.test_align import EXPECTED

    lex = Lexicon.load()
    labels = json.loads((ROOT / "tests/data/documents-model-lines.json").read_text("utf-8"))["documents"]
    by_doc: dict[str, list[Any]] = {}
    for line in (ROOT / "tests/data/documents-extraction.jsonl").read_text("utf-8").splitlines():
        rec = json.loads(line)
        rows = read_source(ROOT / "tests/data/documents" / rec["doc"]).text.split("\n")
        span = (rec["first_line"], rec["last_line"])
        chunk = "\n".join(rows[span[0] - 1:span[1]])
        want = {(s, p, a): tuple(ln) for s, p, a, ln in labels[rec["doc"]]}
        units = to_units(Extraction.model_validate_json(json_text(rec["reply"])), lex, doc=rec["doc"], mode="summary")
        by_doc.setdefault(rec["doc"], []).extend((u, chunk, span, want[_key(u)]) for u in units)
    out: list[tuple[str, list[Any]]] = sorted(by_doc.items())
    for line in (ROOT / "tests/data/gzip-extraction.jsonl").read_text("utf-8").splitlines():
        rec = json.loads(line)
        units = to_units(Extraction.model_validate_json(json_text(rec["reply"])), lex, doc="README", mode="summary")
        n = rec["text"].count("\n") + 1
        out.append((f"gzip#{rec['n']}", [(u, rec["text"], (1, n), EXPECTED[rec["n"]][_key(u)]) for u in units]))
    return out


def score(items: list[Any], how: str) -> dict[str, float]:
    from kgservice.extraction.align import unit_lines

    exact = inside = width = 0
    for u, chunk, span, want in items:
        got = span if how == "chunk" else (unit_lines([u], chunk, span[0])[0] or span)
        exact += got == want
        inside += got[0] <= want[0] and want[1] <= got[1]
        width += got[1] - got[0] + 1
    n = len(items)
    return {"units": n, "exact": exact / n, "covers": inside / n, "lines": width / n}


def main() -> None:
    sets = cases()
    print("| set | units | recorded lines | exact | cover the sentence | lines shown (mean) |")
    print("|---|---|---|---|---|---|")
    for label, names in (("tune", TUNE), ("report", None)):
        items = [it for name, its in sets if (name in TUNE) == (label == "tune") for it in its]
        for how in ("chunk", "sentence"):
            s = score(items, how)
            print(f"| {label} ({', '.join(sorted(n for n, _ in sets if (n in TUNE) == (label == 'tune')))}) "
                  f"| {s['units']} | {'the chunk' if how == 'chunk' else 'the sentence(s)'} | {s['exact']:.2f} "
                  f"| {s['covers']:.2f} | {s['lines']:.1f} |")


if __name__ == "__main__":
    main()
