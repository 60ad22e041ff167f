"""The front door is on top: no module below ``service.py`` imports it, not even for typing, or
calls its methods back (they take the parts they use: :class:`kgservice.parts.Parts`, or single
parts). Only the shells over it (the CLI, the server, the web page) and the package's own
docstrings name it."""

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
    assert not found, "take the parts (kgservice.parts.Parts) instead:\n" + "\n".join(found)


def test_pending_entries_still_import_it():
    for rel in PENDING:
        assert imports_of_service(ast.parse((PACKAGE / rel).read_text("utf-8"))), f"{rel}: remove it from PENDING"


def test_the_scan_sees_an_import_under_type_checking():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kgservice.service import KnowledgeBase\n")
    assert imports_of_service(tree) == [3]


def module_name(path: Path) -> str:
    parts = ("kgservice", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(paths: dict[str, Path], typing: bool = False):
    """Module -> the kgservice modules it imports when it runs (at the top or inside a function;
    imports under ``if TYPE_CHECKING`` are annotations only and never run, so they count only
    with ``typing=True``)."""
    import networkx as nx

    g = nx.DiGraph()
    for name, path in paths.items():
        tree = ast.parse(path.read_text("utf-8"))
        typing_only = set() if typing else {
            id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
            and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in paths:  # `from pkg import name`: the module is pkg
                    target = target.rpartition(".")[0]
                if target and target != name:
                    g.add_edge(name, target)
    return g


def test_the_import_drawing_has_no_circle():
    """Each layer imports only downwards, so any module can be read (and replaced) from the
    bottom up; a circle would make two modules one."""
    import networkx as nx

    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    cycles = sorted((c for c in nx.simple_cycles(import_graph(paths))), key=len)
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c + c[:1]) for c in cycles[:10])


#: circles that exist only through ``TYPE_CHECKING`` imports, each with why; remove one once gone
TYPING_CIRCLES_PENDING: dict[frozenset[str], str] = {}


def test_the_type_level_drawing_has_no_circle_but_the_pending():
    """Type-only imports do not run, but a reader (and a type checker) still follows them: a
    circle through them makes two modules one to understand."""
    import networkx as nx

    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    cycles = [c for c in nx.simple_cycles(import_graph(paths, typing=True))
              if frozenset(c) not in TYPING_CIRCLES_PENDING]
    assert not cycles, "type-level import circles:\n" + "\n".join(
        " -> ".join(c + c[:1]) for c in sorted(cycles, key=len)[:10])
    still = {frozenset(c) for c in nx.simple_cycles(import_graph(paths, typing=True))}
    assert not set(TYPING_CIRCLES_PENDING) - still, "remove the circles that are gone from TYPING_CIRCLES_PENDING"


def test_the_cycle_check_sees_a_lazy_import(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from kgservice.b import g\n", "utf-8")
    (tmp_path / "b.py").write_text("from kgservice.a import f\n", "utf-8")
    (tmp_path / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kgservice.a import f\n", "utf-8")
    g = import_graph({"kgservice.a": tmp_path / "a.py", "kgservice.b": tmp_path / "b.py",
                      "kgservice.c": tmp_path / "c.py"})
    assert set(g.edges) == {("kgservice.a", "kgservice.b"), ("kgservice.b", "kgservice.a")}
    typed = import_graph({"kgservice.a": tmp_path / "a.py", "kgservice.b": tmp_path / "b.py",
                          "kgservice.c": tmp_path / "c.py"}, typing=True)
    assert set(typed.edges) - set(g.edges) == {("kgservice.c", "kgservice.a")}


# -- no call back up: the modules below the front door take the parts, not the front door ----------
#: packages above the front door (they call it) and the front door itself
ABOVE = ("service.py", "cli", "server", "web")
#: method names of other libraries' objects that a front-door method shares, each with where
OTHER_LIBRARIES: dict[str, str] = {"retrieve": "the Qdrant clients' point reads (vectors/edge_store.py, qdrant_store.py)"}


def front_door_methods() -> set[str]:
    """The methods of ``KnowledgeBase`` (its properties are the parts, which the bundle has too)."""
    tree = ast.parse((PACKAGE / "service.py").read_text("utf-8"))
    kb = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "KnowledgeBase")
    return {n.name for n in kb.body if isinstance(n, ast.FunctionDef)
            and not {ast.unparse(d) for d in n.decorator_list} & {"property", "cached_property"}}


def lower_modules() -> dict[str, ast.Module]:
    return {rel: ast.parse(p.read_text("utf-8")) for p in sorted(PACKAGE.rglob("*.py"))
            if (rel := p.relative_to(PACKAGE).as_posix()) not in ABOVE and rel.split("/")[0] not in ABOVE}


def class_methods(trees: list[ast.Module]) -> set[str]:
    return {n.name for t in trees for c in ast.walk(t) if isinstance(c, ast.ClassDef)
            for n in c.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def front_door_calls(tree: ast.Module, methods: set[str], only_there: set[str]) -> list[tuple[int, str]]:
    """Calls from one module back into the front door: ``x.m(...)`` with ``m`` a method only
    ``KnowledgeBase`` has (no class below it defines that name), on anything but an imported
    module; and any ``KnowledgeBase`` method called on something named ``kb`` (or ``self.kb``)
    or on a parameter annotated ``KnowledgeBase``."""
    modules = {a.asname or a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    front = {"kb", "self.kb", "self._kb"} | {
        a.arg for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        for a in f.args.args + f.args.kwonlyargs if a.annotation is not None
        and "KnowledgeBase" in ast.unparse(a.annotation)}
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            recv, name = ast.unparse(n.func.value), n.func.attr
            if (recv in front and name in methods) or (name in only_there and recv not in modules):
                found.append((n.lineno, f"{recv}.{name}()"))
    return found


def test_no_lower_module_calls_the_front_door():
    """The modules below ``service.py`` get the parts they use (:class:`kgservice.parts.Parts`)
    and call the functions that do the work; a call back up to a ``KnowledgeBase`` method would
    make a reader climb back to the front door to follow it."""
    trees = lower_modules()
    methods = front_door_methods()
    only_there = methods - class_methods(list(trees.values())) - set(OTHER_LIBRARIES)
    assert {"ingest_units", "ingest_document", "forget"} <= only_there  # what the scan below rests on
    found = [f"kgservice/{rel}:{line}: {call}" for rel, tree in trees.items()
             for line, call in front_door_calls(tree, methods, only_there)]
    assert not found, "call the module function with the parts instead:\n" + "\n".join(found)


def test_the_call_scan_sees_a_call_back_up():
    """What the lower modules did before they took the parts: each of these is found."""
    methods = front_door_methods()
    only_there = methods - class_methods(list(lower_modules().values())) - set(OTHER_LIBRARIES)
    src = '''
from kgservice.lifecycle import ops
def sync(kb: Changing, folder):
    kb.ingest_document("a.md", "text")
    kb.forget_opened()
def restore(parts, units):
    parts.ingest_units(units)
def run(k: "KnowledgeBase"):
    return k.reopen_vectors(recreate=True)
class Worker:
    def run_once(self):
        return self.kb.forget(["a.md"])
def fine(parts):
    ops.forget(parts, ["a.md"])  # a module's function, not the front door
    parts.reopen_vectors()  # the bundle's own
'''
    assert front_door_calls(ast.parse(src), methods, only_there) == [
        (4, "kb.ingest_document()"), (5, "kb.forget_opened()"), (7, "parts.ingest_units()"),
        (9, "k.reopen_vectors()"), (12, "self.kb.forget()")]
