"""Load graph.json (ours or graphify's) into a light, read-only graph.

Reads networkx node_link data: nodes under ``nodes``, edges under ``links`` (networkx
>= 3.4 default and graphify's writer) or ``edges`` (older writers). No networkx import:
the commands need adjacency and attributes only, and start-up time matters.

Semantics kept from networkx's ``node_link_graph`` so graphify's answers can be
reproduced: node order is file order, nodes named only by a link are appended in link
order, a repeated node id merges its attributes. Each link keeps its stored arc
(``source`` -> ``target``) and its true direction (``_src``/``_tgt`` markers, which
graphify writes for links persisted in flipped order, win when they name the same two
endpoints).
"""

from __future__ import annotations

import gc
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


_EMPTY: list[int] = []


class GraphLoadError(Exception):
    """graph.json is missing, not JSON, or not node_link shaped."""


def _out_points_up(value: str) -> bool:
    """``.``, ``..``, ``../..``, ``./``: the project itself or a parent of it, never an output dir."""
    norm = os.path.normpath(value)
    return norm == "." or all(part == ".." for part in Path(norm).parts)


def default_out_dir() -> Path:
    """graphify's output dir: ``graphify-out`` unless ``GRAPHIFY_OUT`` says otherwise."""
    value = (os.environ.get("GRAPHIFY_OUT") or "").strip()
    if not value or _out_points_up(value):
        return Path("graphify-out")
    return Path(value)


def out_dir_warning() -> str | None:
    """graphify's stderr line when ``GRAPHIFY_OUT`` names the project or a parent of it (its
    outputs would land in the project root, and ``uninstall --purge`` would delete it), so the
    default ``graphify-out`` is used instead; None when the variable is fine or unset."""
    value = (os.environ.get("GRAPHIFY_OUT") or "").strip()
    if not value or not _out_points_up(value):
        return None
    return (f"warning: GRAPHIFY_OUT={value!r} points at the project or a parent of it; "
            "using 'graphify-out' instead")


def default_graph_path() -> Path:
    return default_out_dir() / "graph.json"


@dataclass(slots=True)
class Link:
    u: str  # stored arc tail
    v: str  # stored arc head
    src: str  # true source
    tgt: str  # true target
    data: dict


def make_link(lk: dict) -> Link:
    """A link dict as a :class:`Link`: its stored arc and its true direction."""
    u, v = lk["source"], lk["target"]
    if u.__class__ is not str:
        u = str(u)
    if v.__class__ is not str:
        v = str(v)
    src, tgt = u, v
    if "_src" in lk or "_tgt" in lk:
        ms, mt = lk.get("_src"), lk.get("_tgt")
        ms = str(ms) if ms is not None else u
        mt = str(mt) if mt is not None else v
        if {ms, mt} == {u, v}:
            src, tgt = ms, mt
    return Link(u, v, src, tgt, lk)


class LinkList:
    """The graph's links, each made into a :class:`Link` the first time it is read.

    A command touches a small part of a big graph; building 300k Link objects up front
    cost more than parsing them.
    """

    __slots__ = ("_raw", "_made")

    def __init__(self, raw: list[dict]):
        self._raw = raw
        self._made: list[Link | None] = [None] * len(raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, i: int) -> Link:
        lk = self._made[i]
        if lk is None:
            lk = self._made[i] = make_link(self._raw[i])
        return lk

    def __iter__(self):
        for i in range(len(self._raw)):
            yield self[i]

    def ends(self, idx: list[int], key: str) -> set[str]:
        """The stored ``source`` or ``target`` ids of these links (no Link objects made)."""
        raw = self._raw
        out = {raw[i][key] for i in idx}
        if any(x.__class__ is not str for x in out):
            out = {str(x) for x in out}
        return out


@dataclass
class Graph:
    path: Path
    order: list[str]
    attrs: dict[str, dict]
    links: LinkList
    directed: bool = False  # the file's own flag (graphify's query honours it)
    multigraph: bool = False
    raw: dict = field(default_factory=dict, repr=False)
    _out: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _in: dict[str, list[int]] = field(default_factory=dict, repr=False)
    cache: dict[str, Any] = field(default_factory=dict, repr=False)

    # -- basic accessors ------------------------------------------------------------
    def __contains__(self, nid: object) -> bool:
        return nid in self.attrs

    def __len__(self) -> int:
        return len(self.order)

    def label(self, nid: str) -> str:
        """Display label: ``label`` when present (even empty, like ``dict.get``), else the id."""
        d = self.attrs.get(nid, {})
        lab = d.get("label", nid)
        return str(lab) if lab is not None else str(nid)

    def raw_label(self, nid: str) -> Any:
        """``label`` exactly as stored (``None`` for a null label), else the id: the value
        graphify's readers print (``d.get('label', nid)``), which a null label turns into
        ``None`` or an empty string depending on the command."""
        return self.attrs.get(nid, {}).get("label", nid)

    def label_or_id(self, nid: str) -> str:
        """``label or id`` (an empty label falls back to the id)."""
        lab = self.attrs.get(nid, {}).get("label")
        return str(lab) if lab else str(nid)

    # -- adjacency (built while loading) ------------------------------------------------
    def out_links(self, nid: str) -> list[int]:
        """Indices of links stored with ``nid`` as the arc tail, file order."""
        return self._out.get(nid, _EMPTY)

    def in_links(self, nid: str) -> list[int]:
        return self._in.get(nid, _EMPTY)

    def link_count(self, nid: str) -> int:
        """Links touching ``nid`` (parallel links each count, a self-loop twice)."""
        return len(self._out.get(nid, _EMPTY)) + len(self._in.get(nid, _EMPTY))

    def incident(self, nid: str) -> list[int]:
        """Every link touching ``nid`` (a self-loop once)."""
        seen = list(self.out_links(nid))
        seen += [i for i in self.in_links(nid) if self.links[i].u != nid]
        return seen

    # -- degrees with networkx's semantics for the graph class graphify would load ----
    def arc_keys(self, idx: list[int]) -> list[list[int]]:
        """The links of one arc (same stored source and target), grouped into the edges a
        networkx multigraph makes of them: by ``key``, a link without one taking the lowest
        free integer key (``len(keys)`` upwards), so a later link naming that key joins it."""
        keys: dict[Any, list[int]] = {}
        for i in idx:
            k = self.links._raw[i].get("key")
            if k is None:
                k = len(keys)
                while k in keys:
                    k += 1
            try:
                keys.setdefault(k, []).append(i)
            except TypeError:  # an unhashable key (networkx fails on it): the link stands alone
                keys[("unhashable", i)] = [i]
        return list(keys.values())

    def merged_data(self, idx: list[int]) -> dict:
        """The attributes networkx keeps for links folded into one edge: each link's in turn,
        a later value winning key by key (the link's own dict when there is one)."""
        if len(idx) == 1:
            return self.links[idx[0]].data
        d: dict = {}
        for i in idx:
            d.update(self.links[i].data)
        return d

    def _multi_count(self, idx: list[int], end: str) -> int:
        raw = self.links._raw
        arcs: dict[Any, list[int]] = {}
        for i in idx:
            arcs.setdefault(raw[i][end], []).append(i)
        if len(arcs) == len(idx):  # no parallel links: one edge each
            return len(idx)
        return sum(len(self.arc_keys(grp)) if len(grp) > 1 else 1 for grp in arcs.values())

    def degree(self, nid: str, *, directed: bool, multigraph: bool) -> int:
        """Degree as ``G.degree(nid)`` of the networkx class (di/multi) a reader builds."""
        outs = self.out_links(nid)
        ins = self.in_links(nid)
        if multigraph:
            # every keyed edge counts once per endpoint (links sharing a key are one edge);
            # a self-loop counts twice
            if directed:
                return self._multi_count(outs, "target") + self._multi_count(ins, "source")
            return len(outs) + len(ins)
        succ = self.links.ends(outs, "target")
        pred = self.links.ends(ins, "source")
        if directed:
            return len(succ) + len(pred)
        nbrs = succ | pred
        return len(nbrs) + (1 if nid in nbrs else 0)


def load_graph(path: str | Path) -> Graph:
    """Read ``path``; raise :class:`GraphLoadError` with a readable reason on failure."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise GraphLoadError(f"graph file not found: {p.resolve()}") from None
    except OSError as exc:
        raise GraphLoadError(f"could not read graph: {exc}") from None
    collecting = gc.isenabled()
    gc.disable()  # millions of fresh containers, none cyclic: collections would only cost time
    try:
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise GraphLoadError(f"{p} is corrupted: not JSON ({exc}). Rebuild it (kg export or graphify update).") from None
        return graph_from_data(data, p)
    finally:
        if collecting:
            gc.enable()


def graph_from_data(data: Any, path: Path | None = None) -> Graph:
    if not isinstance(data, dict) or not isinstance(data.get("nodes", []), list):
        raise GraphLoadError("not a node_link graph: expected an object with a 'nodes' list")
    raw_links = data.get("links")
    if raw_links is None:
        raw_links = data.get("edges", [])
    if not isinstance(raw_links, list):
        raise GraphLoadError("not a node_link graph: 'links' must be a list")
    order: list[str] = []
    attrs: dict[str, dict] = {}
    for n in data.get("nodes", []):
        if not isinstance(n, dict) or "id" not in n:
            continue
        nid = n["id"]
        if nid.__class__ is not str:
            nid = str(nid)
        if nid in attrs:
            attrs[nid].update(n)
        else:
            order.append(nid)
            attrs[nid] = n
    kept: list[dict] = []
    out: dict[str, list[int]] = {}
    inn: dict[str, list[int]] = {}
    append = kept.append
    for lk in raw_links:
        try:
            u = lk["source"]
            v = lk["target"]
        except (KeyError, TypeError):
            continue
        if u.__class__ is not str:
            u = str(u)
        if v.__class__ is not str:
            v = str(v)
        if u not in attrs:
            order.append(u)
            attrs[u] = {"id": u}
        if v not in attrs:
            order.append(v)
            attrs[v] = {"id": v}
        i = len(kept)
        append(lk)
        o = out.get(u)
        if o is None:
            out[u] = [i]
        else:
            o.append(i)
        o = inn.get(v)
        if o is None:
            inn[v] = [i]
        else:
            o.append(i)
    return Graph(
        path=Path(path) if path is not None else Path("graph.json"),
        order=order,
        attrs=attrs,
        links=LinkList(kept),
        directed=bool(data.get("directed", False)),
        multigraph=bool(data.get("multigraph", False)),
        raw=data,
        _out=out,
        _in=inn,
    )
