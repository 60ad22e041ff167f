"""``kg docs list|show``, ``kg forget``, ``kg retract``, ``kg history``, ``kg undo``, ``kg purge``,
``kg sync``, ``kg show``: each one KnowledgeBase call and a print."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from kgservice.cli.common import errors_reported, knowledge_base, out, print_json, print_listing, refuse_beside_server, with_llm
from kgservice.errors import InputError

if TYPE_CHECKING:
    from kgservice.lifecycle.model import ChangeResult

docs_app = typer.Typer(help="Documents in the knowledge base.", no_args_is_help=True)


def _said(res: ChangeResult, as_json: bool, what: str = "") -> None:
    """``what``: what the change was asked about when it names no document (a retract's units,
    the change an undo undoes)."""
    if as_json:
        print_json(res.model_dump())
        return
    if res.change is None:
        out.print(f"{', '.join(res.docs)}: unchanged ({res.unchanged} units)")
        return
    subject = ", ".join(res.docs) or what
    out.print(f"change {res.change} ({res.kind}{' ' + subject if subject else ''}): {res.added} unit(s) added, "
              f"{res.retracted} retracted, {res.unchanged} unchanged"
              + (f", {res.kept_shared} kept (stated by another document)" if res.kept_shared else "")
              + (f", {res.orphaned_nodes} node(s) removed" if res.orphaned_nodes else ""))


@docs_app.command("list")
def docs_list(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Every document: id, version, units, when, who."""
    with knowledge_base(ctx) as kb:
        docs = kb.documents()
    if as_json:
        print_json([d.model_dump() for d in docs])
        return
    print_listing(f"{len(docs)} document(s)", ["id", "title", "mode", "version", "units", "when", "who"],
                  [(d.id, d.title, d.mode, str(d.version), str(d.units), d.when, d.who or "") for d in docs])


@docs_app.command("show")
def docs_show(ctx: typer.Context, doc: Annotated[str, typer.Argument(help="Document id (`kg docs list`).")],
              as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """One document: its fields, its units with their lines, and its text."""
    with knowledge_base(ctx) as kb:
        rec = kb.document(doc)
    if as_json:
        print_json(rec.view())
        return
    from kgservice.lifecycle.place import locate

    for k, v in rec.info().model_dump().items():
        out.print(f"{k}: {v}", markup=False, highlight=False)
    for uid, ln in rec.unit_lines.items():
        where = f"  #{uid}  lines {ln[0]}-{ln[1]}" if ln else f"  #{uid}"
        if ln and rec.pages:
            where += f"  ({locate(rec, ln).location})"
        out.print(where, markup=False, highlight=False)
    text = rec.text()
    if text is not None:
        out.print("---", markup=False)
        out.print(text, markup=False, highlight=False)


@docs_app.command("original")
def docs_original(ctx: typer.Context, doc: Annotated[str, typer.Argument(help="Document id (`kg docs list`).")],
                  output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write it here (default: "
                                                                  "the file name, in the current folder).")] = None,
                  ) -> None:
    """The file a converted document (PDF, DOCX, PPTX, HTML, XLSX) was ingested from, as given."""
    from kgservice.disk import writing

    with knowledge_base(ctx) as kb:
        orig = kb.original(doc)
    path = output or Path(orig.name)
    with writing(path, "the original of " + doc):
        path.write_bytes(orig.data)
    out.print(f"{path}: {len(orig.data)} bytes ({orig.media_type})", markup=False, highlight=False)


def forget(ctx: typer.Context, docs: Annotated[list[str], typer.Argument(help="Document ids.")],
           as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Remove documents: their units leave the graph unless another document states them."""
    refuse_beside_server(ctx, "`kg forget`")
    with knowledge_base(ctx) as kb:
        _said(kb.forget(docs), as_json)


def retract(ctx: typer.Context, units: Annotated[list[str], typer.Argument(help="Unit ids.")],
            reason: Annotated[str, typer.Option("--reason", help="Why (kept in the history).")],
            as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Take units out of the graph (kept until purged; `kg undo` puts them back)."""
    refuse_beside_server(ctx, "`kg retract`")
    with knowledge_base(ctx) as kb:
        _said(kb.retract(units, reason), as_json, ", ".join(units))


def history(ctx: typer.Context, target: Annotated[Optional[str], typer.Argument(help="A document or unit id.")] = None,
            as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Lifecycle changes, oldest first: who, when, what."""
    with knowledge_base(ctx) as kb:
        rows = [c.summary() for c in kb.history(target)]
    if as_json:
        print_json(rows)
        return
    print_listing(f"{len(rows)} change(s)", ["change", "kind", "when", "who", "docs / units", "added", "retracted"],
                  [(r["id"], r["kind"] + (f" {r['undoes']}" if r["undoes"] else ""), r["at"], r["who"] or "",
                    ", ".join(r["docs"] or r["units"]), str(r["added"]), str(r["retracted"])) for r in rows])


def undo(ctx: typer.Context, change: Annotated[str, typer.Argument(help="Change id (`kg history`).")],
         as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Undo a lifecycle change (an undo too) as a new change."""
    refuse_beside_server(ctx, "`kg undo`")
    with knowledge_base(ctx) as kb:
        _said(kb.undo(change), as_json, f"of {change}")


def purge(ctx: typer.Context,
          retracted_before: Annotated[str, typer.Option("--retracted-before", help="ISO date: purge what was retracted before it.")],
          yes: Annotated[bool, typer.Option("--yes", help="Really delete (there is no undo).")] = False) -> None:
    """Delete for good the units retracted (and document texts forgotten) before a date."""
    refuse_beside_server(ctx, "`kg purge`")
    with knowledge_base(ctx) as kb:
        rep = kb.purge(retracted_before, yes=yes)
    out.print(f"purged {rep.units} retracted unit(s) and {rep.documents} forgotten document text(s) before {rep.before}")


def sync(ctx: typer.Context, folder: Annotated[Path, typer.Argument(help="The folder to mirror.")],
         no_delete: Annotated[bool, typer.Option("--no-delete", help="Keep documents whose files are gone.")] = False,
         mode: Annotated[Optional[str], typer.Option("--mode", help="Text files: summary | detail.")] = None,
         llm: Annotated[Optional[str], typer.Option("--llm", help="Text files: litellm model for this run (env KG_LLM_MODEL).")] = None,
         as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Make the knowledge base mirror a folder: new files ingested, changed replaced, gone forgotten."""
    refuse_beside_server(ctx, "`kg sync`")
    with_llm(ctx, llm)
    with knowledge_base(ctx) as kb:
        rep = kb.sync(folder, delete=not no_delete, mode=mode,
                      progress=None if as_json else (lambda kind, doc: out.print(f"{kind}: {doc}", markup=False)))
    if as_json:
        print_json(rep.model_dump())
        return
    out.print(f"{len(rep.added)} added, {len(rep.changed)} changed, {len(rep.forgotten)} forgotten, "
              f"{len(rep.unchanged)} unchanged"
              + (f", {len(rep.kept)} kept although their files are gone (--no-delete)" if rep.kept else ""))


def show(ctx: typer.Context, unit: Annotated[str, typer.Argument(help="Unit id.")],
         as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """One unit in notation, with the documents and lines it comes from."""
    from kgservice.notation.serializer import format_unit

    with knowledge_base(ctx) as kb:
        rec = kb.unit(unit)
        if rec is None:
            gone = kb.store.retracted_units([unit.lstrip("#")])
            raise InputError(f"unit {unit!r} is retracted (change {gone[unit.lstrip('#')].change})" if gone
                             else f"no unit {unit!r} in the graph")
        prov = kb.provenance(unit)
    if as_json:
        print_json({"unit": rec.unit.model_dump(), "superseded_by": rec.superseded_by,
                    "sources": [p.model_dump() for p in prov]})
        return
    out.print(format_unit(rec.unit), markup=False, highlight=False)
    from kgservice.answer.sources import source_ref

    for p in prov:
        out.print(f"from {p.location if p.page else source_ref(p.doc, p.lines)}", markup=False, highlight=False)
        if p.snippet:
            out.print("  " + p.snippet.replace("\n", "\n  "), markup=False, highlight=False)
    if not prov and rec.unit.doc:
        out.print(f"from {rec.unit.doc}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(docs_app, name="docs")
    for fn in (forget, retract, history, undo, purge, sync, show):
        app.command(fn.__name__)(fn)


__all__ = ["register", "errors_reported"]
