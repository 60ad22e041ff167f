"""``kg dump --all-workspaces DIR`` / ``kg restore --all-workspaces DIR``: every workspace of a
deployment to one folder and back.

The folder holds one ordinary per-workspace dump per workspace (:mod:`kgservice.admin.backup`,
``<name>.jsonl.gz``, so any one of them also restores alone with ``kg --workspace NAME restore``)
and ``manifest.json``::

    {"kgservice_dump_set": 1, "created_at": ..., "backend": ...,
     "workspaces": [{"name": ..., "file": "<name>.jsonl.gz", "sha256": ..., "units": N}, ...]}

A folder rather than one file: each member is the format restore already verifies line by line,
and a reader can check or restore one workspace without unpacking the others. The folder is
written whole or not at all: everything goes to a temporary folder beside ``DIR``, which is
renamed to ``DIR`` only once every dump and the manifest are complete (``DIR`` must not exist).

Keys are not in it, as they are not in a per-workspace dump: they belong to the deployment (and
hold hashes of secrets), not to a knowledge base. A restore leaves the target's keys as they are.

A restore reads and verifies every member first (its sha256 against the manifest, then the
whole per-workspace check: header, lines, counts, checksum, the lexicon, the batch's references)
and checks every target workspace: one that holds units is refused unless ``replace``. Only then
is anything written, so a damaged member or an occupied workspace stores nothing in any
workspace. Workspaces of the target that the manifest does not name are left alone.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from dataclasses import replace as with_fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kgservice.admin.backup import DumpError, TargetNotEmpty, check_units, dump, file_sha256, read_dump, restore
from kgservice.config import Settings, check_workspace_name
from kgservice.disk import fsync_dir
from kgservice.errors import InputError, ReadOnlyError

SET_FORMAT = 1
MANIFEST = "manifest.json"


def _member(name: str) -> str:
    return f"{name}.jsonl.gz"


def dump_all(settings: Settings, folder: Path | str) -> dict[str, Any]:
    """Dump every workspace of the deployment into the new folder ``folder``; returns the manifest."""
    from kgservice.parts import Parts
    from kgservice.workspaces import list_workspaces

    from kgservice.stores.factory import missing_store

    folder = Path(folder)
    if missing := missing_store(settings):  # opening would create an empty store where none is
        raise InputError(missing)
    if folder.exists():
        raise InputError(f"{folder} already exists: `kg dump --all-workspaces` writes a new folder")
    if not folder.parent.is_dir():
        raise InputError(f"no such folder: {folder.parent}")
    tmp = folder.with_name(f".{folder.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    tmp.mkdir()
    try:
        members = []
        backend = None
        for name in list_workspaces(settings):
            parts = Parts(with_fields(settings, workspace=name))
            try:
                info = dump(parts.store, tmp / _member(name))
                backend = parts.store.backend
            finally:
                parts.close()
            members.append({"name": name, "file": _member(name), "sha256": file_sha256(tmp / _member(name)),
                            "units": info["units"]})
        manifest = {"kgservice_dump_set": SET_FORMAT,
                    "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    "backend": backend, "workspaces": members}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        fsync_dir(tmp)
        os.rename(tmp, folder)
        fsync_dir(folder.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"path": str(folder), **manifest}


def read_manifest(folder: Path | str) -> list[dict[str, Any]]:
    """The manifest's members, each checked for shape; :class:`DumpError` names the problem."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not folder.is_dir():
        raise DumpError(f"no such folder: {folder} (`kg restore --all-workspaces` takes the folder "
                        "`kg dump --all-workspaces` wrote)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DumpError(f"{path}: no manifest, not a folder written by `kg dump --all-workspaces`") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DumpError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(data, dict) or data.get("kgservice_dump_set") != SET_FORMAT \
            or not isinstance(data.get("workspaces"), list):
        raise DumpError(f"{path}: not a kgservice dump-set manifest (format {SET_FORMAT})")
    seen: set[str] = set()
    for i, m in enumerate(data["workspaces"]):
        if not isinstance(m, dict) or not all(isinstance(m.get(k), str) for k in ("name", "file", "sha256")):
            raise DumpError(f"{path}: workspace entry {i + 1} needs name, file and sha256")
        try:
            check_workspace_name(m["name"])
        except Exception as exc:
            raise DumpError(f"{path}: workspace entry {i + 1}: {exc}") from None
        if m["name"] in seen or m["file"] != _member(m["name"]):
            raise DumpError(f"{path}: workspace entry {i + 1} ({m['name']!r}): a second entry for it, or a file "
                            f"other than {_member(m['name'])!r}")
        seen.add(m["name"])
    return data["workspaces"]


def restore_all(settings: Settings, folder: Path | str, *, replace: bool = False,
                embed: bool = True) -> dict[str, Any]:
    """Restore every workspace the manifest in ``folder`` names (creating the missing ones), after
    every member was verified and every target found empty (or ``replace``)."""
    from kgservice.deployment import refuse_if_served
    from kgservice.parts import Parts
    from kgservice.stores.factory import missing_store
    from kgservice.stores.validate import prepare_batch
    from kgservice.workspaces import create_workspace, exists

    if settings.read_only:
        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); restore refused")
    folder = Path(folder)
    members = read_manifest(folder)
    lexicon = Parts(settings).lexicon
    for m in members:  # every member whole, one at a time (memory: one dump)
        path = folder / m["file"]
        if not path.is_file():
            raise DumpError(f"{path}: missing (the manifest names it); nothing restored")
        if file_sha256(path) != m["sha256"]:
            raise DumpError(f"{path}: sha256 differs from the manifest's - the file was changed or damaged; "
                            "nothing restored")
        try:
            d = read_dump(path)
            check_units(d, lexicon, path)
            dumped = {r.unit.id for k, r in d.lifecycle if k == "retracted"}
            prepare_batch(d.units, lambda ids: {}, archived=lambda ids: {i for i in ids if i in dumped})
        except InputError as exc:
            raise DumpError(f"workspace {m['name']!r}: {exc} (nothing restored in any workspace)") from None
    occupied: dict[str, int] = {}
    for m in members:
        ws = with_fields(settings, workspace=m["name"])
        if not exists(settings, m["name"]):
            continue
        refuse_if_served(ws, f"restoring workspace {m['name']!r}", exclusive=True)
        if missing_store(ws):
            continue
        parts = Parts(ws)
        try:
            units = parts.store.counts().get("units", 0)
        finally:
            parts.close()
        if units:
            occupied[m["name"]] = units
    if occupied and not replace:
        held = ", ".join(f"{n} ({u} units)" for n, u in occupied.items())
        raise TargetNotEmpty(f"workspace(s) holding units: {held}; nothing restored. Restore into a "
                             "deployment without them, or pass --replace --yes (wipe each first)")
    restored = []
    for m in members:
        if not exists(settings, m["name"]):
            create_workspace(settings, m["name"])
        parts = Parts(with_fields(settings, workspace=m["name"]))
        try:
            info = restore(parts, folder / m["file"], replace=m["name"] in occupied, embed=embed)
        finally:
            parts.close()
        restored.append({"name": m["name"], "units": info["units"], "units_added": info["units_added"],
                         "replaced": m["name"] in occupied})
    return {"path": str(folder), "replaced": sorted(occupied), "workspaces": restored}
