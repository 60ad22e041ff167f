"""``kg doctor [--repair]``, ``kg dump FILE``, ``kg restore FILE``, ``kg migrate``: registered by :func:`register`.

Exit codes: 0 = consistent / done; 1 = problems remain (or the service failed);
2 = bad input (a damaged dump file, a conflicting restore).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer



def doctor(
    ctx: typer.Context,
    repair: Annotated[bool, typer.Option("--repair", help="Fix what was found: re-derive indexes from units, "
                                                         "delete stray vectors, embed missing ones.")] = False,
    salvage: Annotated[bool, typer.Option("--salvage", help="Embedded store that is damaged or missing its snapshot: "
                                                           "rebuild it from every intact record (the damaged files "
                                                           "are kept beside it), then repair.")] = False,
    no_vectors: Annotated[bool, typer.Option("--no-vectors", help="Check the graph only (no embedder, no vector store).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Check that the graph says what its units say (nodes, reverse indexes, relation edges,
    supersessions) and that every entry/derived node has exactly its vector. Exit 0 if consistent.
    Findings are "drifted" (--repair fixes), "damaged" or "missing" (--salvage or a restore fixes)."""
    from rich.markup import escape

    from kgservice.cli.common import BAD_INPUT, FAILED, err, knowledge_base, out, print_json

    if salvage and repair:
        err.print("[red]error:[/red] --salvage already repairs afterwards; give one of --salvage / --repair", markup=True)
        raise typer.Exit(BAD_INPUT)
    if repair or salvage:
        from kgservice.cli.common import refuse_beside_server

        refuse_beside_server(ctx, "`kg doctor --salvage`" if salvage else "`kg doctor --repair`")
    with knowledge_base(ctx) as kb:
        salvaged = None
        if salvage:
            salvaged, report = kb.salvage(vectors=not no_vectors)
        else:
            report = kb.doctor(repair=repair, vectors=not no_vectors)
        final = report.final
        if as_json:
            print_json({**report.to_dict(), **({"salvaged": salvaged} if salvaged else {})})
        else:
            if salvaged:
                out.print(f"salvaged: {salvaged['units_kept']} units kept; damaged files kept in "
                          f"{escape(salvaged['damaged_files_kept_in'])}", highlight=False, soft_wrap=True, markup=True)
                for note in salvaged["notes"]:
                    out.print("  " + escape(note), highlight=False, soft_wrap=True, markup=True)
                for key in ("units_dropped_invalid", "units_dropped_dangling"):
                    if salvaged[key]:
                        out.print(f"  {key.replace('_', ' ')}: {escape(', '.join(salvaged[key][:20]))}",
                                  highlight=False, soft_wrap=True, markup=True)
            out.print(f"kg doctor ({report.backend}): {report.units} units, {report.nodes} nodes"
                      + (f", {report.vectors} vectors" if report.vectors is not None else "")
                      + (f" ({report.vector_note})" if report.vector_note else ""), highlight=False)
            if report.vector_placement:
                vp = report.vector_placement
                out.print(f"vectors: {escape(vp['location'])} ({'shared' if vp['shared'] else 'not shared'}: "
                          f"{escape(vp['why'])})", highlight=False, soft_wrap=True, markup=True)
            for f in report.findings:
                out.print("  " + escape(f.line()), highlight=False, soft_wrap=True, markup=True)
            if report.repaired is not None:
                out.print(f"repaired: {escape(str(report.repaired))}", highlight=False, soft_wrap=True, markup=True)
                for f in final.findings:
                    out.print("  still: " + escape(f.line()), highlight=False, soft_wrap=True, markup=True)
            if final.ok:
                out.print("consistent")
            else:
                out.print("problems remain" if (repair or salvage) else "problems found", highlight=False)
                for category, fix in final.fixes().items():
                    out.print(f"{category}: {escape(fix)}", highlight=False, soft_wrap=True, markup=True)
        if not final.ok:
            raise typer.Exit(FAILED)


def dump_cmd(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="Dump file to write (JSON Lines; gzip if it ends in .gz); with "
                                              "--all-workspaces a new folder.")],
    all_workspaces: Annotated[bool, typer.Option("--all-workspaces", help="Every workspace of the deployment: one "
                                                 "dump each and a manifest, in a new folder written whole.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Write every unit (the ground truth) and node label to one portable, checksummed file."""
    from kgservice.cli.common import errors_reported, knowledge_base, out, print_json, settings_of

    if all_workspaces:
        from kgservice.admin.backup_all import dump_all

        with errors_reported():
            info = dump_all(settings_of(ctx), path)
        if as_json:
            print_json(info)
        else:
            out.print(f"dumped {len(info['workspaces'])} workspace(s) to {path}: " + ", ".join(
                f"{m['name']} ({m['units']} units)" for m in info["workspaces"]), highlight=False)
        return
    with knowledge_base(ctx) as kb:
        info = kb.dump(path)
        if as_json:
            print_json(info)
        else:
            out.print(f"dumped {info['units']} units and {info['nodes']} node labels to {path}", highlight=False)


def restore_cmd(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="A file written by `kg dump` (with --all-workspaces: its folder).")],
    all_workspaces: Annotated[bool, typer.Option("--all-workspaces", help="Every workspace a `kg dump "
                                                 "--all-workspaces` folder holds (missing ones are created); all "
                                                 "verified before any is written.")] = False,
    merge: Annotated[bool, typer.Option("--merge", help="Add to a non-empty store (identical units are unchanged).")] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Wipe the store (graph, vectors, caches) first; needs --yes.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm --replace.")] = False,
    no_embed: Annotated[bool, typer.Option("--no-embed", help="Restore the graph only; `kg doctor --repair` embeds later.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Restore units from a dump: the whole file is verified before anything is written."""
    from kgservice.cli.common import BAD_INPUT, err, knowledge_base, out, print_json

    if replace and not yes:
        err.print("[red]error:[/red] --replace deletes the current graph, vectors and caches; add --yes to confirm", markup=True)
        raise typer.Exit(BAD_INPUT)
    if replace and merge:
        err.print("[red]error:[/red] --merge and --replace exclude each other", markup=True)
        raise typer.Exit(BAD_INPUT)
    from kgservice.cli.common import refuse_beside_server

    if all_workspaces:
        _restore_all(ctx, path, replace=replace, merge=merge, embed=not no_embed, as_json=as_json)
        return
    refuse_beside_server(ctx, "`kg restore`")
    with knowledge_base(ctx) as kb:
        info = kb.restore(path, replace=replace, merge=merge, embed=not no_embed)
        if as_json:
            print_json(info)
        else:
            out.print(f"restored {info['units']} units from {path}: {info['units_added']} added, "
                      f"{info['units_unchanged']} unchanged, {info['labels_restored']} labels set"
                      + (f", {info['saved_results_restored']} saved results added"
                         if info.get("saved_results_restored") else "")
                      + (f", {info['merge_decisions_restored']} entity-resolution decisions added"
                         if info.get("merge_decisions_restored") else ""), highlight=False)


def _restore_all(ctx: typer.Context, path: Path, *, replace: bool, merge: bool, embed: bool, as_json: bool) -> None:
    """``kg restore --all-workspaces``: no --merge (a conflict found in one workspace's merge would
    come after others were written, and the point is that nothing is written unless all can be)."""
    from kgservice.admin.backup_all import restore_all
    from kgservice.cli.common import BAD_INPUT, err, errors_reported, out, print_json, settings_of

    if merge:
        err.print("[red]error:[/red] --merge is not offered with --all-workspaces (restore into empty workspaces, "
                  "or --replace --yes)", markup=True)
        raise typer.Exit(BAD_INPUT)
    with errors_reported():
        info = restore_all(settings_of(ctx), path, replace=replace, embed=embed)
    if as_json:
        print_json(info)
    else:
        out.print(f"restored {len(info['workspaces'])} workspace(s) from {path}: " + ", ".join(
            f"{m['name']} ({m['units']} units{', replaced' if m['replaced'] else ''})" for m in info["workspaces"]),
            highlight=False)


def migrate_cmd(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say which steps would run; change nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Bring the store's schema up to this release's version, in place. Steps that only add run
    by themselves whenever a store is opened; a step that older releases cannot work beside runs
    only here: stop the older servers and workers first. Exit 1 if the store is newer than this
    kgservice."""
    from kgservice.cli.common import knowledge_base, out, print_json, refuse_beside_server

    if not dry_run:
        refuse_beside_server(ctx, "`kg migrate`")
    with knowledge_base(ctx) as kb:
        report = kb.migrate(dry_run=dry_run)
        if as_json:
            print_json(report.model_dump())
            return
        if not report.applied:
            out.print(f"schema version {report.after}: up to date", highlight=False)
            return
        start = "an empty store" if report.fresh else f"schema version {report.before}"
        verb = "would run" if dry_run else "ran"
        out.print(f"{start} -> {report.after} ({verb} {len(report.applied)} step(s); kgservice schema "
                  f"{report.compat} or later can use it):", highlight=False, markup=False)
        for step in report.applied:
            out.print(f"  {step['version']}: {step['what']}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate_cmd)
    app.command("doctor")(doctor)
    app.command("dump")(dump_cmd)
    app.command("restore")(restore_cmd)
