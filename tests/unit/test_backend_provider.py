"""A backend is one provider: outside ``kgservice/stores/`` no module branches on the backend's
name or reaches into a store's connection (the settings module, which defines the names, aside)."""

from __future__ import annotations

import ast
from pathlib import Path

import kgservice

ROOT = Path(kgservice.__file__).parent
BACKEND_NAMES = {"neo4j", "embedded"}
STORE_PRIVATES = {"_session", "_read", "driver", "database"}
ALLOWED = {ROOT / "config.py"}  # where the setting and its choices are defined


def offences(path: Path) -> list[str]:
    where = path.relative_to(ROOT) if ROOT in path.parents else path.name
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Constant) and node.value in BACKEND_NAMES:
            found.append(f"{where}:{node.lineno} names the backend {node.value!r}")
        elif isinstance(node, ast.Attribute) and node.attr in STORE_PRIVATES:
            found.append(f"{where}:{node.lineno} reaches into .{node.attr}")
    return found


def test_offences_are_found(tmp_path):
    """The check itself: it flags a branch on the name and a reach into the driver."""
    probe = tmp_path / "probe.py"
    probe.write_text('if settings.backend == "neo4j":\n    store.driver.close()\n', "utf-8")
    assert len(offences(probe)) == 2


def test_no_module_outside_stores_knows_the_backend():
    outside = [p for p in sorted(ROOT.rglob("*.py"))
               if (ROOT / "stores") not in p.parents and p not in ALLOWED]
    assert len(outside) > 50
    found = [o for p in outside for o in offences(p)]
    assert not found, "\n".join(found)
