"""``kg ask``, ``kg cache stats|clear`` and ``kg ingest-text``: registered by :func:`register`.

``kg ingest-text`` is ``kg ingest`` restricted to text files, kept for scripts: unit files
in a folder are skipped, and a unit file named on the command line is refused (unknown text
type) unless ``--mode`` says to read it as text.

Module level imports stay light (typer only): the pipelines, numpy and litellm load
inside the commands, so ``kg --help`` and other commands do not pay for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kgservice.cli.common import with_llm
from kgservice.config import DEFAULT_MAX_ROUNDS

if TYPE_CHECKING:
    from kgservice.pipeline.asking import AskResult
    from kgservice.service import KnowledgeBase

cache_app = typer.Typer(help="The four query caches (DESIGN §5): stats and clear.", no_args_is_help=True)


def _say(text: str, style: str | None = None) -> None:
    from kgservice.cli.common import out

    out.print(text, style=style, markup=False, highlight=False, soft_wrap=True)


def _usage_line(llm: dict[str, Any]) -> str:
    parts = ", ".join(f"{k} {v['calls']}" for k, v in llm.get("by_purpose", {}).items() if v["calls"])
    return (f"LLM: {llm.get('calls', 0)} call(s)" + (f" ({parts})" if parts else "")
            + f", {llm.get('total_tokens', 0)} tokens")


def _print_trace(res: AskResult) -> None:
    _say("key nodes: " + (", ".join(f"{n['label']} -> {n['matches'] or 'no match'}" for n in res.key_nodes) or "none"))
    if res.key_predicates:
        _say("key predicates: " + ", ".join(f"{p['predicate']} ({p['family']})" for p in res.key_predicates))
    for e in res.entries:
        hits = ", ".join(f"{h} {s:.3f}" for h, s in e["hits"]) or "nothing above the threshold"
        _say(f"entry {e['label']}: {hits}" + (" (cached)" if e["cached"] else ""))
    _print_rounds(res.rounds)
    _say(f"stop: {res.stop_reason}")
    for p in res.rejected:
        _say(f"answer rejected: {p}", style="yellow")
    _say("")


def _print_rounds(rounds: list[dict[str, Any]]) -> None:
    for r in rounds:
        seeds = ", ".join(f"{k} {v:.2f}" for k, v in r["seeds"].items())
        act = "" if r["activation_cached"] is None else (" activation cached" if r["activation_cached"] else "")
        _say(f"round {r['round']} [{r['mode']}] seeds: {seeds}{act}", style="bold")
        _say(f"  +{len(r['new_units'])} unit(s)" + (f", {r['dropped_over_cap']} over the unit cap" if r["dropped_over_cap"] else "")
             + f", pool {r['pool']}")
        for uid in r["new_units"]:
            text = r.get("units_text", {}).get(uid, "")
            _say(f"    #{uid} {text.splitlines()[0] if text else ''}")
        d = r["decision"]
        if d:
            _say(f"  decision{' (cached)' if r['decision_cached'] else ''}: relevant {d['relevant']}, "
                 f"enough={'yes' if d['enough'] else 'no'}, next seeds {d['next_seeds']}, mode {d['mode']}, "
                 f"drift={'yes' if d['drift'] else 'no'}" + (f" - {d['reason']}" if d.get("reason") else ""))
        if r.get("note"):
            _say(f"  note: {r['note']}")


class _Draft:
    """The answer as the model writes it, on a terminal only: shown dim under "writing, not yet
    checked" and erased when the checked answer is printed (rich ``Live``, transient); a draft
    the grounded check refuses is marked at once, and the checked answer says it replaced it."""

    def __init__(self) -> None:
        self.live: Any = None
        self.attempt = 0
        self.sentences: dict[int, str] = {}
        self.short = ""
        self.refused: str | None = None

    def __enter__(self) -> "_Draft":
        from rich.live import Live

        from kgservice.cli.common import out

        self.live = Live(console=out, transient=True, auto_refresh=False)
        self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.live.__exit__(*exc)

    def event(self, kind: str, d: dict[str, Any]) -> None:
        from rich.text import Text

        if kind == "answer_start":
            self.attempt, self.sentences, self.short, self.refused = d["attempt"], {}, "", None
        elif not kind.startswith("answer_") or d.get("attempt") != self.attempt:
            return
        elif kind == "answer_short":
            self.short += d["text"]
        elif kind == "answer_text":
            self.sentences[d["sentence"]] = self.sentences.get(d["sentence"], "") + d["text"]
        elif kind == "answer_cite" and d["resolved"]:
            self.sentences[d["sentence"]] = self.sentences.get(d["sentence"], "") + f" [{d['unit']}]"
        elif kind == "answer_check":
            self.refused = None if d["passed"] else ("; ".join(d["problems"][:2]) or "ungrounded")
        head = ("refused by the grounding check: " + self.refused) if self.refused else "writing, not yet checked"
        text = Text(f"({head})\n", style="yellow" if self.refused else "dim")
        if self.short:
            text.append(f"answer: {self.short}\n", style="dim strike" if self.refused else "bold")
        text.append(" ".join(self.sentences[i] for i in sorted(self.sentences)), style="dim strike" if self.refused else "dim")
        self.live.update(text, refresh=True)


def ask_command(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question, in any language the graph holds.")],
    trace: Annotated[bool, typer.Option("--trace", help="Print every round: seeds, units, decision.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON.")] = False,
    max_rounds: Annotated[int, typer.Option("--max-rounds", help="Hard cap on drill-down rounds.")] = DEFAULT_MAX_ROUNDS,
    max_units: Annotated[int, typer.Option("--max-units", help="Hard cap on units collected.")] = 40,
    top_k: Annotated[int, typer.Option("--top-k", help="Vector entry: nodes per key node.")] = 5,
    threshold: Annotated[float, typer.Option("--threshold", help="Vector entry: minimum cosine.")] = 0.6,
    llm: Annotated[Optional[str], typer.Option("--llm", help="litellm model for this run (env KG_LLM_MODEL), "
                                                "e.g. kgoffline/rules for the offline demo.")] = None,
    server: Annotated[Optional[str], typer.Option("--server", help="Ask this running kg serve (http://HOST:PORT) "
                                                  "instead: nothing is loaded here, the server answers with its own "
                                                  "model and knowledge base.")] = None,
    key: Annotated[Optional[str], typer.Option("--key", envvar="KG_API_KEY", show_envvar=True, show_default=False,
                                               help="With --server: an API key with the reader role (none for a "
                                                    "server started with --no-auth).")] = None,
) -> None:
    """Answer a question from the graph, citing unit ids, or say it is not in the graph. On a
    terminal the answer is shown as the model writes it, then replaced by the checked answer."""
    from kgservice.cli.common import knowledge_base, print_json, refuse_beside_server

    if server is not None:
        _ask_remote(server, key, question, trace, as_json, llm,
                    dict(max_rounds=max_rounds, max_units=max_units, top_k=top_k, threshold=threshold))
        return
    with_llm(ctx, llm)
    refuse_beside_server(ctx, "`kg ask`")  # at once, not after waiting for the vectors the server holds
    with knowledge_base(ctx) as kb:
        from kgservice.pipeline.asking import AskParams

        params = AskParams(max_rounds=max_rounds, max_units=max_units, top_k=top_k, threshold=threshold)
        from kgservice.cli.common import out

        draft = _Draft() if out.is_terminal and not as_json else None
        if draft is None:
            res = kb.ask(question, params, trace=trace or as_json)
        else:
            with draft:
                res = kb.ask(question, params, trace=trace, on_stream=draft.event)
        if as_json:
            print_json(res.to_dict())
            return
        if trace:
            _print_trace(res)
        if draft is not None and draft.refused:
            _say(f"The streamed draft did not pass the grounding check ({draft.refused}); this is the checked answer:",
                 style="yellow")
        _print_answer(res.to_dict())


def _print_answer(res: dict[str, Any], where: str = "") -> None:
    """An answer in the one shape the library, REST and MCP share (``AskResult.to_dict()``,
    ``kgservice.server.models.AskOut``): the answer, its units and sources, what it cost.
    ``where``: the server that answered, if not this process."""
    found = bool(res.get("found"))
    _say(res.get("answer", ""), style=None if found else "yellow")
    if res.get("hit_units") and found:
        _say("")
        _say(f"hit units ({len(res['hit_units'])}):", style="dim")
        for u in res["hit_units"]:
            _say(f"  #{u['id']} {u['unit'].splitlines()[0]}", style="dim")
    if res.get("sources") and found:
        from kgservice.answer.sources import sources_line

        _say(sources_line(res["sources"]), style="dim")
    caches = (res.get("caches") or {}).values()
    hits = sum(v["hits"] for v in caches)
    misses = sum(v["misses"] for v in caches)
    _say(f"{_usage_line(res.get('llm') or {})} · caches {hits} hit(s) / {misses} miss(es) · "
         f"{len(res.get('rounds') or [])} round(s), stop: {res.get('stop_reason', '')} · "
         f"{float(res.get('seconds', 0.0)):.2f} s" + (f" (server {where})" if where else ""), style="dim")
    from kgservice.answer.retrieval_only import NO_MODEL_NOTE

    if NO_MODEL_NOTE in (res.get("notes") or []):
        _say(f"note: {NO_MODEL_NOTE}", style="yellow")


def _ask_remote(server: str, key: str | None, question: str, trace: bool, as_json: bool, llm: str | None,
                params: dict[str, Any]) -> None:
    """``kg ask --server``: the server's answer, printed as a local one is (``--json``: its reply
    as the server sent it). On a terminal it is asked for as a stream, so the answer shows as the
    model writes it, as a local ``kg ask`` shows it, then the checked answer replaces it."""
    from kgservice.cli.common import errors_reported, out, print_json
    from kgservice.errors import InputError

    draft = _Draft() if out.is_terminal and not as_json else None
    with errors_reported():
        if llm:
            raise InputError("--llm cannot be used with --server: the server answers with its own model "
                             "(KG_LLM_MODEL where it runs)")
        from kgservice.cli.remote import ask_remote

        body = {"question": question, "trace": trace, **params}
        if draft is None:
            reply = ask_remote(server, key, body)
        else:
            with draft:
                reply = ask_remote(server, key, body, on_event=draft.event)
    if as_json:
        print_json(reply)
        return
    if trace and reply.get("rounds"):
        _print_rounds(reply["rounds"])
        _say(f"stop: {reply.get('stop_reason', '')}")
        _say("")
    if draft is not None and draft.refused:
        _say(f"The streamed draft did not pass the grounding check ({draft.refused}); this is the checked answer:",
             style="yellow")
    _print_answer(reply, server)


@cache_app.command("stats")
def cache_stats(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Entries, dependencies, hits, misses and invalidations per cache."""
    from rich.table import Table

    from kgservice.cli.common import knowledge_base, out, print_json

    with knowledge_base(ctx) as kb:
        stats = kb.cache_stats()
        if as_json:
            print_json(stats)
            return
        table = Table(title=f"caches ({stats['path']}, {stats['bytes']} bytes)")
        for col in ("cache", "entries", "dependencies", "hits", "misses", "invalidated"):
            table.add_column(col, justify="left" if col == "cache" else "right")
        for name, c in stats["caches"].items():
            table.add_row(name, *(str(c[k]) for k in ("entries", "dependencies", "hits", "misses", "invalidated")))
        out.print(table)


@cache_app.command("clear")
def cache_clear(ctx: typer.Context) -> None:
    """Drop every cache entry (the graph, vectors and document ledger are untouched)."""
    from kgservice.cli.common import knowledge_base, refuse_beside_server

    refuse_beside_server(ctx, "`kg cache clear`")
    with knowledge_base(ctx) as kb:
        n = kb.clear_caches()
        _say(f"cleared {n} cache entr{'y' if n == 1 else 'ies'}")


def ingest_text_command(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Text / Markdown files (.md .markdown .rst .txt .text), documents (.pdf .docx .pptx .html .htm .xlsx) or folders.")],
    mode: Annotated[Optional[str], typer.Option("--mode", help="summary | detail; default by file type "
                                                "(.md/.rst and documents summary, .txt detail).")] = None,
    no_embed: Annotated[bool, typer.Option("--no-embed", help="Store units only; embed later.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Re-extract documents already ingested.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    llm: Annotated[Optional[str], typer.Option("--llm", help="litellm model for this run (env KG_LLM_MODEL).")] = None,
) -> None:
    """Text files only: extract units with the LLM and ingest them (idempotent per document).

    `kg ingest` does the same for the text files among its arguments; this command keeps a
    name for scripts that must never ingest a unit file by accident."""
    from kgservice.cli.common import knowledge_base

    with_llm(ctx, llm)
    from kgservice.cli.common import refuse_beside_server

    refuse_beside_server(ctx, "`kg ingest-text`")
    with knowledge_base(ctx) as kb:
        ingest_text_and_print(kb, paths, mode, embed=not no_embed, force=force, as_json=as_json)


class TextPrinter:
    """The progress bar and one line per document (stderr) of a text ingest, then its summary
    (stdout); shared by ``kg ingest`` and ``kg ingest-text``. The bar starts on the first event."""

    def __init__(self, as_json: bool):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from kgservice.cli.common import err

        self.as_json = as_json
        self.bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=err, disable=as_json, transient=True)
        self.task = self.bar.add_task("extracting", total=None)
        self.started = False

    def progress(self, event: str, info: dict[str, Any]) -> None:
        bar, task = self.bar, self.task
        if not self.started:
            bar.start()
            self.started = True
        if event == "start":
            bar.update(task, total=info["chunks"])
        elif event == "chunk":
            bar.update(task, advance=1, description=f"extracting {Path(info['path']).name}")
        elif event == "document" and not self.as_json:
            if info["status"] == "unchanged":
                bar.console.print(f"{info['path']}: unchanged (ingested {info['previously']})",
                                  markup=False, highlight=False)
            else:
                res = ", ".join(f"{k} {v}" for k, v in sorted(info["resolution"].items()))
                bar.console.print(f"{info['path']} [{info['mode']}]: {info['chunks']} chunk(s), "
                                  f"{info['units_extracted']} units extracted, {info['units_added']} added, "
                                  f"{info['nodes_added']} nodes added" + (f" (labels: {res})" if res else ""),
                                  markup=False, highlight=False)

    def stop(self) -> None:
        if self.started:
            self.bar.stop()
            self.started = False

    def summary(self, report: Any) -> None:
        from kgservice.cli.common import print_json

        data = report.to_dict()
        if self.as_json:
            print_json(data)
            return
        _say(f"{data['files']} file(s): {data['ingested']} ingested, {data['unchanged_documents']} unchanged; "
             f"{data['units_added']} units added, {data['units_unchanged']} already stored, "
             f"{data['nodes_added']} nodes added · {_usage_line(data['llm'])}")


def ingest_text_and_print(kb: KnowledgeBase, paths: list[Path], mode: str | None, *, embed: bool, force: bool,
                          as_json: bool) -> None:
    """``kb.ingest_text`` through a :class:`TextPrinter`."""
    printer = TextPrinter(as_json)
    try:
        report = kb.ingest_text(paths, mode, progress=printer.progress, embed=embed, force=force)
    finally:
        printer.stop()
    printer.summary(report)


def register(app: typer.Typer) -> None:
    app.command("ask")(ask_command)
    app.command("ingest-text")(ingest_text_command)
    app.add_typer(cache_app, name="cache")
