"""Streamed answers: how soon the answer's text reaches an SSE client after the model writes it.

    python scripts/bench/stream_answer.py [--delays 0.02,0.1] [--questions 6] [--units demo/units] [--recorded F ...]

The app runs under uvicorn on a loopback port in this process (so the model's and the client's
clocks are one ``time.perf_counter``); the model is the offline rule-based one (``kgoffline/rules``)
streaming its answer slowly, one token (the cl100k tokenizer, from the table litellm ships) every ``--delays`` seconds
(``KG_OFFLINE_STREAM_DELAY``; 0.02 s is 50 tokens/s, a hosted model's pace; 0.1 s a slow one). Each question is asked once on fresh caches (an uncached answer:
key nodes, drill-down and answer all go to the model) through ``POST /v1/ask`` with
``Accept: text/event-stream``. Per question, side by side in the same run:

* ``model first`` — the model yields its first piece of the answer reply;
* ``model short`` — the model yields the token that holds the short answer's first character
  (the answer prompt's text format puts it first, so this is the first piece; the earlier JSON
  prompt's reply opened ``{"found": true, "answer": "``, 9 tokens before it);
* ``SSE short`` — the client reads the first ``answer_short`` event (the page's first words now);
* ``model text`` — the model yields the token that holds the first sentence's first character
  (line 2; in JSON after the short answer and ``", "sentences": [{"text": "``);
* ``SSE text`` — the client reads the first ``answer_text`` event (the page's first words before
  the short answer streamed: the figure the earlier runs reported);
* ``SSE first`` — the earlier of ``SSE short`` and ``SSE text``;
* ``model last`` — the model yields its last piece;
* ``SSE answer`` — the client reads the checked ``answer`` event: the first text the page showed
  before streaming (it had only this event).

Printed per question and as medians: model text − model first (the model's own pace over what
comes before the first sentence: the short answer's line, and in JSON the keys), SSE text − model text (what streaming adds to the model's
own first word), SSE text − model first (the first sentence's text after the model's first
token), the same three for the short answer, SSE first − model first (the issue's "first
streamed token after the model's first token", which includes whatever the reply puts before its
first text at the model's own pace: nothing in the text format, ``{"found": true, "answer": "`` in
JSON), SSE answer − model last (the check, caching and sources after the model is done),
and SSE answer − SSE text (how much earlier the page shows words than it did before streaming).

Then, for a capable model's recorded grounded-answer replies (``--recorded``, by default the
answer-quality runs in scripts/eval/recordings), how many tokens stand before each reply's
short answer and before its first sentence: where its stream would first have text to show.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from common import ROOT, save, table  # noqa: E402

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def serve(app):
    import socket

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    while not server.started:
        if not t.is_alive():
            raise SystemExit("uvicorn did not start")
        time.sleep(0.05)
    return server, t, f"http://127.0.0.1:{port}"


def watch_model() -> list[list[tuple[float, str]]]:
    """Times of every piece the offline model yields, one list per streamed reply."""
    from kgservice.llm import offline

    replies: list[list[tuple[float, str]]] = []
    real = offline.streamed

    def streamed(*args, **kwargs):
        seen: list[tuple[float, str]] = []
        replies.append(seen)
        for chunk in real(*args, **kwargs):
            seen.append((time.perf_counter(), chunk.choices[0].delta.content or ""))
            yield chunk

    offline.streamed = streamed
    return replies


def _text_lines(raw: str) -> list[str] | None:
    """The lines with text of a reply so far in the text format (None for a JSON reply)."""
    lines = [ln.strip() for ln in raw.split("\n") if ln.strip() and not ln.strip().startswith("```")]
    return None if lines and "{" in lines[0] else lines


def has_sentence_text(raw: str) -> bool:
    lines = _text_lines(raw)
    if lines is not None:  # text: a second line has begun
        return len(lines) > 1
    obj = _json_prefix(raw)
    s = obj.get("sentences") if isinstance(obj, dict) else None
    return isinstance(s, list) and bool(s) and isinstance(s[0], dict) and bool(s[0].get("text"))


def has_short_answer(raw: str) -> bool:
    lines = _text_lines(raw)
    if lines is not None:  # text: line 1 has a character
        return bool(lines)
    obj = _json_prefix(raw)
    return isinstance(obj, dict) and isinstance(obj.get("answer"), str) and bool(obj["answer"])


def _json_prefix(raw: str) -> object:
    from kgservice.answer.streaming import parse_prefix

    start = raw.find("{")
    try:
        return parse_prefix(raw[start:]) if start >= 0 else None
    except ValueError:
        return None


def first_piece(pieces: list[tuple[float, str]], test=has_sentence_text) -> float | None:
    """Time of the token after which the reply read so far passes ``test`` (by default: its first
    sentence has a character of text; :func:`has_short_answer`: its short answer has one), in
    either answer format (the prompt's text lines, or the earlier JSON object)."""
    raw = ""
    for t, p in pieces:
        raw += p
        if test(raw):
            return t
    return None


def recorded_positions(paths: list[Path]) -> list[dict]:
    """Per recorded grounded-answer reply that answers (``found``): how many tokens (cl100k, as
    the offline model cuts them) come before its short answer's first character and before its
    first sentence's, i.e. where a stream of that reply would first have text to show."""
    from kgservice.answer.reply import parse_reply
    from kgservice.llm.offline import pieces

    out = []
    for path in paths:
        for line in path.read_text("utf-8").splitlines():
            rec = json.loads(line)
            if rec.get("purpose") != "answer" or not parse_reply(rec["response"]).found:
                continue
            toks = [(float(i), p) for i, p in enumerate(pieces(rec["response"]))]
            short, text = first_piece(toks, has_short_answer), first_piece(toks, has_sentence_text)
            out.append({"file": path.name, "model": rec.get("model"), "tokens": len(toks),
                        "short_at": None if short is None else int(short), "text_at": None if text is None else int(text)})
    return out


def ask_sse(base: str, key: str, question: str) -> dict[str, float]:
    import httpx

    times: dict[str, float] = {}
    kind = ""
    with httpx.stream("POST", base + "/v1/ask", json={"question": question}, timeout=600,
                      headers={"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            now = time.perf_counter()
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                times.setdefault(kind, now)
                if kind == "answer":
                    times["found"] = float(json.loads(line[5:]).get("found", False))
    return times


def run_delay(delay: float, questions: list[str], units: Path, replies: list) -> list[dict]:
    """Every question once, uncached, on a fresh knowledge base, the model at ``delay`` s per token."""
    from kgservice.config import Settings
    from kgservice.server import ServeOptions, create_app
    from kgservice.service import KnowledgeBase

    os.environ["KG_OFFLINE_STREAM_DELAY"] = str(delay)
    work = Path(tempfile.mkdtemp(prefix="kg-stream-bench-"))
    settings = Settings(data_dir=work / "kg", embedder="hash:256", llm_model="kgoffline/rules", rate_limit=0.0,
                        llm_retry_wait=0.0)
    records = []
    try:
        with KnowledgeBase(settings) as kb:
            kb.ingest_paths([units])
            app = create_app(settings, ServeOptions(kb=kb))
            server, thread, base = serve(app)
            key = app.state.ctx.keys().create("bench", "reader")[0]
            try:
                for q in questions:
                    before = len(replies)
                    sse = ask_sse(base, key, q)
                    mine = replies[before:]
                    if not mine or "answer_text" not in sse:
                        records.append({"question": q, "delay": delay, "streamed": False})
                        continue
                    m_first, m_last = mine[0][0][0], mine[-1][-1][0]
                    m_text = first_piece(mine[0])
                    m_short = first_piece(mine[0], has_short_answer)
                    s_first = min(sse[k] for k in ("answer_short", "answer_text") if k in sse)
                    records.append({
                        "question": q, "delay": delay, "streamed": True, "tokens": len(mine[-1]), "attempts": len(mine),
                        "model_text_minus_model_first_ms": None if m_text is None else (m_text - m_first) * 1e3,
                        "sse_text_minus_model_text_ms": None if m_text is None else (sse["answer_text"] - m_text) * 1e3,
                        "sse_text_minus_model_first_ms": (sse["answer_text"] - m_first) * 1e3,
                        "model_short_minus_model_first_ms": None if m_short is None else (m_short - m_first) * 1e3,
                        "sse_short_minus_model_short_ms": None if m_short is None or "answer_short" not in sse
                        else (sse["answer_short"] - m_short) * 1e3,
                        "sse_first_minus_model_first_ms": (s_first - m_first) * 1e3,
                        "sse_answer_minus_model_last_ms": (sse["answer"] - m_last) * 1e3,
                        "sse_answer_minus_sse_text_ms": (sse["answer"] - sse["answer_text"]) * 1e3})
            finally:
                server.should_exit = True
                thread.join(30)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return records


KEYS = ("model_text_minus_model_first_ms", "sse_text_minus_model_text_ms", "sse_text_minus_model_first_ms",
        "model_short_minus_model_first_ms", "sse_short_minus_model_short_ms", "sse_first_minus_model_first_ms",
        "sse_answer_minus_model_last_ms", "sse_answer_minus_sse_text_ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delays", default="0.02,0.1", help="seconds per streamed token, comma-separated (a slow model)")
    ap.add_argument("--questions", type=int, default=6, help="how many of the question file")
    ap.add_argument("--units", type=Path, default=ROOT / "demo" / "units")
    ap.add_argument("--question-file", type=Path, default=ROOT / "demo" / "questions.txt")
    ap.add_argument("--recorded", type=Path, nargs="*", default=[ROOT / "scripts" / "eval" / "recordings" / "real-model.jsonl",
                                                                ROOT / "scripts" / "eval" / "recordings" / "musique.jsonl"],
                    help="recorded model replies (scripts/eval/recordings): where their first text stands")
    args = ap.parse_args()
    replies = watch_model()
    questions = [q.strip() for q in args.question_file.read_text("utf-8").splitlines() if q.strip()][:args.questions]
    delays = [float(d) for d in args.delays.split(",") if d.strip()]
    load0 = os.getloadavg()[0]
    records = [r for d in delays for r in run_delay(d, questions, args.units, replies)]
    load1 = os.getloadavg()[0]
    heads = ["s/token", "question", "tokens", "model text − model first", "SSE text − model text", "SSE text − model first",
             "model short − model first", "SSE short − model short", "SSE first − model first",
             "SSE answer − model last", "SSE answer − SSE text"]
    rows = []
    for d in delays:
        mine = [r for r in records if r["delay"] == d]
        for r in mine:
            rows.append([f"{d:.3f}", r["question"][:44]] + ([r["tokens"]] + [r[k] for k in KEYS] if r["streamed"]
                                                   else ["not streamed (not found or cached)"] + [""] * len(KEYS)))
        done = [r for r in mine if r["streamed"]]
        if done:
            rows.append([f"{d:.3f}", "median", statistics.median(r["tokens"] for r in done)]
                        + [statistics.median(r[k] for r in done if r[k] is not None) for k in KEYS])
    print(table(heads, rows, title=f"streamed answers (ms), kgoffline/rules streaming one token per delay, "
                                   f"{len(questions)} uncached questions per delay, load {load0:.1f} -> {load1:.1f}"))
    recorded = recorded_positions(args.recorded)
    if recorded:
        rows = []
        for name in dict.fromkeys(r["file"] for r in recorded):
            mine = [r for r in recorded if r["file"] == name]
            for k in ("short_at", "text_at"):
                vals = [r[k] for r in mine if r[k] is not None]
                rows.append([name, mine[0]["model"], len(mine), k.replace("_at", ""), len(vals),
                             statistics.median(vals) if vals else "", min(vals, default=""), max(vals, default="")])
        print(table(["recordings", "model", "answers found", "first text of", "replies with it", "median token",
                     "min", "max"], rows, title="where a recorded reply's first text stands (cl100k tokens before it)"))
    save("stream_answer", records, {"delays": delays, "load": [load0, load1], "recorded": recorded})


if __name__ == "__main__":
    main()
