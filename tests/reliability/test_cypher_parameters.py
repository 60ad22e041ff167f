"""Labels never reach Cypher except as parameters.

* statically: every query the Python side sends is the text of a ``cypher/*.cypher`` file
  (``cypher.load`` / ``cypher.statements``), never a formatted or concatenated string;
* dynamically: ingesting, reading, checking and restoring the Cypher-injection corpus sends
  only query texts that are byte-for-byte file contents, and the hostile labels come back
  verbatim while the graph around them is intact.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kgservice.expansion import expand_directed, spread_activation
from kgservice.notation import parse_file
from kgservice.stores import cypher
from tests.reliability.conftest import BAD, ROOT

QUERY_METHODS = {"run", "execute_query"}


def _python_files() -> list[Path]:
    return sorted((ROOT / "kgservice").rglob("*.py"))


def test_every_query_sent_is_a_cypher_file():
    offenders = []
    for path in _python_files():
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in QUERY_METHODS and node.args):
                continue
            q = node.args[0]
            ok = (isinstance(q, ast.Call) and isinstance(q.func, ast.Attribute) and q.func.attr == "load"
                  and isinstance(q.func.value, ast.Name) and q.func.value.id == "cypher") or isinstance(q, ast.Name)
            if isinstance(q, (ast.JoinedStr, ast.BinOp)) or (isinstance(q, ast.Call) and getattr(q.func, "attr", "") == "format"):
                ok = False
            if isinstance(q, ast.Constant) and isinstance(q.value, str):
                ok = False  # inline Cypher: belongs in cypher/*.cypher
            if not ok:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(q)[:80]}")
    assert not offenders, "queries not loaded from cypher/*.cypher:\n" + "\n".join(offenders)


def test_only_the_neo4j_store_talks_to_the_driver():
    users = [p.relative_to(ROOT).as_posix() for p in _python_files()
             if any(isinstance(n, (ast.Import, ast.ImportFrom)) and
                    any((a.name if isinstance(n, ast.Import) else (n.module or "")).split(".")[0] == "neo4j"
                        for a in (n.names if isinstance(n, ast.Import) else [n]))
                    for n in ast.walk(ast.parse(p.read_text("utf-8"))))]
    assert users and all(u.startswith("kgservice/stores/neo4j/") for u in users), users


def _allowed_queries() -> set[str]:
    allowed = set()
    for f in cypher.cypher_dir().glob("*.cypher"):
        allowed.add(cypher.load(f.stem))
        allowed.update(cypher.statements(f.stem))
    return allowed


class _Spy:
    """Wraps the driver, sessions and transactions; records every query text sent."""

    def __init__(self, inner, seen: list[str]):
        self._inner = inner
        self._seen = seen

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __enter__(self):
        self._inner.__enter__()
        return self

    def __exit__(self, *exc):
        return self._inner.__exit__(*exc)

    def execute_query(self, query, *a, **k):
        self._seen.append(query)
        return self._inner.execute_query(query, *a, **k)

    def run(self, query, *a, **k):
        self._seen.append(query)
        return self._inner.run(query, *a, **k)

    def session(self, *a, **k):
        return _Spy(self._inner.session(*a, **k), self._seen)

    def execute_write(self, fn, *a, **k):
        return self._inner.execute_write(lambda tx, *x, **y: fn(_Spy(tx, self._seen), *x, **y), *a, **k)

    def execute_read(self, fn, *a, **k):
        return self._inner.execute_read(lambda tx, *x, **y: fn(_Spy(tx, self._seen), *x, **y), *a, **k)


@pytest.mark.neo4j
def test_hostile_labels_travel_only_as_parameters(neo4j_store, make_kb, lexicon, tmp_path):
    from kgservice.admin import doctor
    from kgservice.admin.backup import dump, restore

    seen: list[str] = []
    store = neo4j_store
    store.driver = _Spy(store.driver, seen)
    canary = parse_file(Path(__file__).parents[1] / "bad_input/safe/self_loops.units", lexicon)
    store.ingest(canary)
    units = parse_file(BAD / "safe/cypher_injection.units", lexicon) + parse_file(BAD / "safe/quotes_backticks_escapes.units", lexicon)
    report = store.ingest(units)
    assert report.units_added == len(units)
    labels = {u.subject for u in units} | {a.node or a.literal for u in units for a in u.args}
    # everything that reads: procedures for every node, expansions, doctor, dump
    for n in list(store.iter_nodes()):
        store.subject_mentions(n.id), store.context_mentions(n.id), store.synonym_class(n.id)
        store.belongs_to_ancestors(n.id), store.node_superseded_end(n.id), store.narrowed_by(n.id)
        expand_directed(store, [n.id])
        spread_activation(store, [n.id])
    rows = store.index_rows()
    assert rows.subject
    dump(store, tmp_path / "d.jsonl")

    allowed = _allowed_queries()
    assert seen and all(q in allowed for q in seen), [q[:120] for q in seen if q not in allowed]
    # (so no label can be in a query text unless it is literally part of a .cypher file)
    assert not [lab for lab in labels if any(lab in q for q in seen) and not any(lab in q for q in allowed)]
    # the labels are stored verbatim, and the "injections" did nothing
    stored = {n.label for n in store.iter_nodes()}
    assert {u.subject for u in units} <= stored
    assert store.counts()["units"] == len(units) + len(canary)
    assert {u.id for u in store.get_units([u.id for u in canary])} == {u.id for u in canary}
    # and they survive a dump / restore round trip through the other backend
    kb = make_kb("embedded")
    restore(kb, tmp_path / "d.jsonl", embed=False)
    assert sorted((n.id, n.label) for n in kb.store.iter_nodes()) == sorted((n.id, n.label) for n in store.iter_nodes())
    assert doctor.check(kb, vectors=False).ok
