"""The test documents (tests/data/documents: a PDF, a DOCX, a PPTX, a web page) through a model:
ingested, then asked three questions whose answers sit on a known page, each answer's sources
with their locations. One command records a capable model's run for CI to replay:

    KG_LLM_MODEL=openai/NAME KG_LLM_API_BASE=http://127.0.0.1:PORT/v1 OPENAI_API_KEY=x KG_LLM_TIMEOUT=1800 \\
        python3 -m scripts.eval.documents --record

writes tests/data/documents-model.jsonl (the exchanges, ``KG_LLM_RECORD``) and
tests/data/documents-model.json (what the run gave: units per document, answers, sources).
tests/documents/test_model_replay.py replays the exchanges (``kgoffline/scripted`` with
``KG_LLM_RECORDINGS``) and checks the same run gives the same, and the citations' pages.
Record again after the extraction or answer prompts change (a replay then misses its key);
``--reuse`` asks the model only the requests the current recording does not hold.

The embedder is ``hash:256`` on both sides: which label pairs entity resolution asks the model
about depends on vector distances, and the hash embedder gives the same ones on every machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ROOT / "tests" / "data" / "documents"
RECORDING = ROOT / "tests" / "data" / "documents-model.jsonl"
OUTCOME = ROOT / "tests" / "data" / "documents-model.json"
EMBEDDER = "hash:256"
QUESTIONS = [
    "Which lake does the Fowler River flow into?",
    "Who owns Appalachian Regional Airport?",
    "Where was basketball played at the 1936 Summer Olympics?",
]


def run(settings: Any) -> dict[str, Any]:
    """Ingest the documents and ask the questions with ``settings``; what the run gave."""
    from kgservice.service import KnowledgeBase

    with KnowledgeBase(settings) as kb:
        kb.ingest_paths([DOCUMENTS])
        docs = {}
        for d in kb.documents():
            rec = kb.document(d.id)
            docs[d.id] = {"format": d.format, "pages": rec.pages, "units": d.units}
        answers = []
        for q in QUESTIONS:
            res = kb.ask(q)
            answers.append({"question": q, "answer": res.answer, "cited": list(res.cited),
                            "sources": [{k: s[k] for k in ("unit", "doc", "lines", "page", "page_lines", "location")}
                                        for s in res.sources]})
    return {"documents": docs, "answers": answers}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="record the exchanges and the outcome into tests/data")
    ap.add_argument("--reuse", action="store_true",
                    help="serve the requests the current recording holds from it and send only the others to the "
                         "model (after a prompt change: only the changed requests are asked again)")
    args = ap.parse_args(argv)
    from kgservice.config import load_settings

    if not os.environ.get("KG_LLM_MODEL"):
        print("set KG_LLM_MODEL (and KG_LLM_API_BASE) to the model to run", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kg-documents-") as tmp:
        os.environ.update({"KG_DATA_DIR": tmp, "KG_EMBEDDER": EMBEDDER})
        if args.reuse:
            from scripts.eval.answers import reuse_recorded

            previous = Path(tmp) / "previous.jsonl"
            previous.write_bytes(RECORDING.read_bytes())
            reuse_recorded([str(previous)])
        if args.record:
            RECORDING.unlink(missing_ok=True)
            os.environ["KG_LLM_RECORD"] = str(RECORDING)
        outcome = run(load_settings())
    text = json.dumps(outcome, ensure_ascii=False, indent=1)
    if args.record:
        OUTCOME.write_text(text + "\n", "utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
