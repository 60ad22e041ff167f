"""``save-result`` and the memory docs it writes (graphify-out/memory/*.md).

A memory doc is the same file graphify's ``save-result`` writes, so either tool's
``reflect`` reads either tool's memory::

    ---
    type: "query"
    date: "2026-01-02T03:04:05.123456+00:00"
    question: "what causes lung cancer?"
    contributor: "graphify"
    outcome: "useful"
    source_nodes: ["smoking", "lung cancer"]
    ---

    # Q: what causes lung cancer?

    ## Answer

    ...

Frontmatter values are YAML double-quoted scalars escaped by hand (no YAML dependency).
:func:`memory_units` turns the docs into unit notation so saved answers come back into
the graph as nodes on the next ingest / export.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgservice.stores.shared import SavedResult

OUTCOMES = ("useful", "dead_end", "corrected")
QUERY_TYPES = ("query", "path_query", "explain")
MAX_SOURCE_NODES = 10

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0",
            "\u2028": "\\L", "\u2029": "\\P"}
_UNESCAPES = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", '"': '"', "\\": "\\", "L": "\u2028", "P": "\u2029"}


def yaml_quote(value: object) -> str:
    """Body of a YAML double-quoted scalar: escapes, line breaks and control characters."""
    if value is None:
        return ""
    out = []
    for ch in str(value):
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def yaml_unquote(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt in _UNESCAPES:
                out.append(_UNESCAPES[nxt])
                i += 2
                continue
            width = {"x": 2, "u": 4}.get(nxt)
            if width and i + 2 + width <= n:
                try:
                    out.append(chr(int(text[i + 2:i + 2 + width], 16)))
                    i += 2 + width
                    continue
                except ValueError:
                    pass
        out.append(ch)
        i += 1
    return "".join(out)


def _slug(question: str) -> str:
    return re.sub(r"[^\w]", "_", question.lower())[:50].strip("_")


def new_saved_result(question: str, answer: str, query_type: str = "query", nodes: list[str] | None = None,
                     outcome: str | None = None, correction: str | None = None, now: datetime | None = None,
                     contributor: str = "graphify") -> SavedResult:
    """One saved result with a fresh unique name (the memory doc's file name)."""
    from kgservice.stores.shared import SavedResult
    if outcome is not None and outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
    now = now or datetime.now(timezone.utc)
    name = f"query_{now.strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:8]}_{_slug(question)}.md"
    return SavedResult(name=name, type=query_type, date=now.isoformat(), question=question, answer=answer,
                       contributor=contributor, outcome=outcome or None, correction=correction or None,
                       source_nodes=list(nodes or []))


def memory_doc_text(rec: SavedResult) -> str:
    """The memory doc graphify's ``save-result`` would write for ``rec``."""
    nodes = rec.source_nodes
    front = ["---", f'type: "{yaml_quote(rec.type)}"', f'date: "{rec.date}"',
             f'question: "{yaml_quote(rec.question)}"', f'contributor: "{yaml_quote(rec.contributor)}"']
    if rec.outcome:
        front.append(f'outcome: "{yaml_quote(rec.outcome)}"')
    if rec.correction:
        front.append(f'correction: "{yaml_quote(rec.correction)}"')
    if nodes:
        front.append("source_nodes: [" + ", ".join(f'"{yaml_quote(n)}"' for n in nodes[:MAX_SOURCE_NODES]) + "]")
    front.append("---")
    body = ["", f"# Q: {rec.question}", "", "## Answer", "", rec.answer]
    if rec.outcome or rec.correction:
        body += ["", "## Outcome", ""]
        if rec.outcome:
            body.append(f"- Signal: {rec.outcome}")
        if rec.correction:
            body.append(f"- Correction: {rec.correction}")
    if nodes:
        body += ["", "## Source Nodes", ""] + [f"- {n}" for n in nodes]
    return "\n".join(front + body)


def save_result(question: str, answer: str, memory_dir: Path, query_type: str = "query",
                nodes: list[str] | None = None, outcome: str | None = None, correction: str | None = None,
                now: datetime | None = None, contributor: str = "graphify") -> Path:
    """Write one memory doc; returns its path. Never overwrites an earlier save. ``contributor``
    names who saved it (a server passes the calling user)."""
    rec = new_saved_result(question, answer, query_type, nodes, outcome, correction, now, contributor)
    memory_dir = Path(memory_dir)
    memory_dir.mkdir(parents=True, exist_ok=True)
    path = memory_dir / rec.name
    path.write_text(memory_doc_text(rec), encoding="utf-8")
    return path


def docs_of_records(records: list[SavedResult]) -> list[dict[str, Any]]:
    """Saved results kept in a store as parsed memory docs (what :func:`load_memory_docs` returns
    for files), so either source feeds :func:`memory_units` the same way."""
    docs = []
    for rec in records:
        doc = parse_memory_doc(memory_doc_text(rec))
        if doc is not None:
            doc["_path"] = rec.name
            docs.append(doc)
    return docs


# --- reading ---------------------------------------------------------------------------

_SCALAR = re.compile(r'^([A-Za-z_][\w-]*):\s*"(.*)"\s*$')
_LIST = re.compile(r"^([A-Za-z_][\w-]*):\s*\[(.*)\]\s*$")
_ITEM = re.compile(r'"((?:[^"\\]|\\.)*)"')
_FIELDS = ("type", "date", "question", "outcome", "correction", "contributor")


def parse_memory_doc(text: str) -> dict[str, Any] | None:
    """Frontmatter fields of a memory doc (``source_nodes`` always a list), or None."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    doc: dict[str, Any] = {"source_nodes": []}
    end = None
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            end = i
            break
        m = _LIST.match(line)
        if m and m.group(1) == "source_nodes":
            doc["source_nodes"] = [yaml_unquote(x) for x in _ITEM.findall(m.group(2))]
            continue
        m = _SCALAR.match(line)
        if m and m.group(1) in _FIELDS:
            doc[m.group(1)] = yaml_unquote(m.group(2))
    doc["_body"] = "\n".join(lines[end + 1:]) if end is not None else ""
    return doc


def load_memory_docs(memory_dir: Path) -> list[dict[str, Any]]:
    """Every parseable ``*.md`` in ``memory_dir``, oldest first (date, then file name)."""
    memory_dir = Path(memory_dir)
    if not memory_dir.is_dir():
        return []
    docs = []
    for path in sorted(memory_dir.glob("*.md")):
        try:
            doc = parse_memory_doc(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if doc is None:
            continue
        doc["_path"] = path.name
        docs.append(doc)
    docs.sort(key=lambda d: (d.get("date", ""), d["_path"]))
    return docs


def answer_of(doc: dict[str, Any]) -> str:
    """The ``## Answer`` section of a parsed doc's body."""
    body = doc.get("_body", "")
    m = re.search(r"^## Answer\s*$", body, re.M)
    if not m:
        return ""
    rest = body[m.end():]
    nxt = re.search(r"^## ", rest, re.M)
    return (rest[: nxt.start()] if nxt else rest).strip()


# --- feeding answers back into the graph ---------------------------------------------------

MAX_ANSWER_CHARS = 2000


def _wrap(opener: str, text: str) -> str:
    closer = {"{": "}", "(": ")", "[": "]"}[opener]
    text = " ".join(str(text).split())
    return opener + text.replace("\\", "\\\\").replace(closer, "\\" + closer) + closer


def _graph_labels(graph_path: Path | None) -> dict[str, tuple[str, bool]]:
    """node id -> (label, is_literal) from graph.json, for citing ids by their label."""
    if graph_path is None or not Path(graph_path).exists():
        return {}
    from kgservice.graphify.loader import GraphLoadError, load_graph

    try:
        g = load_graph(graph_path)
    except GraphLoadError:
        return {}
    out = {}
    for nid in g.order:
        d = g.attrs[nid]
        out[nid] = (g.label(nid), d.get("kind") == "literal" or d.get("file_type") == "literal")
    return out


def memory_units(memory_dir: Path | None, graph_path: Path | None = None,
                 docs: list[dict[str, Any]] | None = None) -> list[str]:
    """Unit-notation lines for every saved answer, ready for ``parse_units``.

    One unit per memory doc::

        #mem-<hash> {Q: question} [answered by] (answer, on one line)
            ()[query type] (query)
            ()[outcome] (useful)
            ()[correction] (what was right)
            ()[asked on] (2026-01-02T03:04:05+00:00)
            ()[cites] {cited node}

    Cited nodes are written by label; with ``graph_path`` an id-form citation becomes its
    node's label (a literal node as ``(literal)``) so the unit lands on the same node.
    Unit ids hash the doc's file name, so re-ingesting the same memory is a no-op. ``docs``:
    more parsed docs (saved results kept in the store, :func:`docs_of_records`); a doc named
    like a file of ``memory_dir`` is taken once.
    """
    labels = _graph_labels(graph_path)
    lines: list[str] = []
    found = load_memory_docs(memory_dir) if memory_dir is not None else []
    names = {d["_path"] for d in found}
    found += [d for d in docs or [] if d["_path"] not in names]
    for doc in found:
        question = " ".join(str(doc.get("question", "")).split())
        if not question:
            continue
        answer = " ".join(answer_of(doc).split()) or "(no answer text)"
        if len(answer) > MAX_ANSWER_CHARS:
            answer = answer[: MAX_ANSWER_CHARS - 1] + "…"
        uid = "mem-" + hashlib.sha1(doc["_path"].encode("utf-8")).hexdigest()[:12]
        lines.append(f"#{uid} {_wrap('{', 'Q: ' + question)} [answered by] {_wrap('(', answer)}")
        lines.append(f"    ()[query type] {_wrap('(', doc.get('type') or 'query')}")
        if doc.get("outcome"):
            lines.append(f"    ()[outcome] {_wrap('(', doc['outcome'])}")
        if doc.get("correction"):
            lines.append(f"    ()[correction] {_wrap('(', doc['correction'])}")
        if doc.get("date"):
            lines.append(f"    ()[asked on] {_wrap('(', doc['date'])}")
        for cited in dict.fromkeys(doc.get("source_nodes", [])):
            cited = str(cited).strip()
            if not cited:
                continue
            label, literal = labels.get(cited, (cited, False))
            if not label.strip():
                continue
            lines.append(f"    ()[cites] {_wrap('(' if literal else '{', label)}")
    return lines
