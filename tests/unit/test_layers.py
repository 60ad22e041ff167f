"""The front door is on top: no module below ``service.py`` imports it, not even for typing
(they take the parts they use, or a Protocol of :mod:`kgservice.parts`). Only the shells over
it (the CLI, the server) and the package's own docstrings name it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "kgservice"
SHELLS = ("cli", "server")
#: modules that still import it, each with why; remove an entry once it takes narrow parts
PENDING: dict[str, str] = {}  # module -> why it still imports the front door (none now)


def imports_of_service(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "kgservice.service":
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "kgservice" and any(
                a.name == "service" for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name == "kgservice.service" for a in node.names):
            lines.append(node.lineno)
    return lines


def test_no_lower_module_imports_the_front_door():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "service.py" or rel.split("/")[0] in SHELLS or rel in PENDING:
            continue
        found += [f"kgservice/{rel}:{n}" for n in imports_of_service(ast.parse(path.read_text("utf-8")))]
    assert not found, "take the narrow parts (or a kgservice.parts Protocol) instead:\n" + "\n".join(found)


def test_pending_entries_still_import_it():
    for rel in PENDING:
        assert imports_of_service(ast.parse((PACKAGE / rel).read_text("utf-8"))), f"{rel}: remove it from PENDING"


def test_the_scan_sees_an_import_under_type_checking():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kgservice.service import KnowledgeBase\n")
    assert imports_of_service(tree) == [3]
