"""Which node a name or path given on the command line names: graphify's ``affected.resolve_seed``,
used by ``query --seed`` and by ``affected``.

In order: the id; the one node whose label equals it (NFC, case-folded); the one whose label
without a trailing ``()`` equals it without one; the nodes of that source file (an absolute
path is taken relative to the graph's project root; ``./a.py/`` is ``a.py``), the file node
among several (at L1 and labelled with the file's name or its path form, else the only L1
node, else the only one so labelled); the one node whose label contains it. Anything else
is None: no node, or no single one.
"""

from __future__ import annotations

from pathlib import Path

from kgservice.graphify.loader import Graph



def nfc_fold(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFC", text).casefold()


def _bare(label: str) -> str:
    label = nfc_fold(label)
    return label[:-2] if label.endswith("()") else label


def repo_relative(value: str, root: Path | None) -> str:
    p = Path(value)
    if p.is_absolute():
        anchor = root if root is not None else Path.cwd()
        try:
            return p.relative_to(anchor).as_posix()
        except ValueError:
            return value
    return p.as_posix()


def is_file_label(label: str, source_file: str) -> bool:
    if not label or not source_file:
        return False
    sf = source_file.replace("\\", "/")
    if label == sf.rsplit("/", 1)[-1]:
        return True
    return "/" in label and (sf == label or sf.endswith("/" + label))


def _prefer_file_node(g: Graph, ids: list[str], query: str) -> str | None:
    base = nfc_fold(Path(query).name)
    a = g.attrs

    def only(cands: list[str]) -> str | None:
        return cands[0] if len(cands) == 1 else None

    l1 = [n for n in ids if str(a[n].get("source_location", "")) == "L1"]
    for cands in ([n for n in l1 if nfc_fold(str(a[n].get("label", ""))) == base],
                  [n for n in l1 if is_file_label(str(a[n].get("label", "")), str(a[n].get("source_file", "")))],
                  l1,
                  [n for n in ids if nfc_fold(str(a[n].get("label", ""))) == base]):
        hit = only(cands)
        if hit is not None:
            return hit
    return None


def resolve_seed(g: Graph, value: str, root: Path | None = None) -> str | None:
    """An explicit ``--seed``: id, unique label, unique bare callable name, the file
    (repo-relative, or absolute under the graph's root), or a unique label substring."""
    value = value.rstrip("/\\") or value
    if value in g:
        return value
    a = g.attrs
    q = nfc_fold(value)
    hits = [n for n in g.order if nfc_fold(str(a[n].get("label", ""))) == q]
    if len(hits) == 1:
        return hits[0]
    qb = _bare(q)
    hits = [n for n in g.order if _bare(str(a[n].get("label", ""))) == qb]
    if len(hits) == 1:
        return hits[0]
    rel = repo_relative(value, root)
    qp = nfc_fold(rel)
    hits = [n for n in g.order if nfc_fold(str(a[n].get("source_file", ""))) in (q, qp)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        pref = _prefer_file_node(g, hits, rel)
        if pref is not None:
            return pref
    hits = [n for n in g.order if q in nfc_fold(str(a[n].get("label", "")))]
    return hits[0] if len(hits) == 1 else None
