"""``god-nodes``: the most connected real entities of graph.json, ranked as graphify 0.9.96 ranks them.

The degree is networkx's for the class graphify's reader builds (a ``DiGraph``, or a
``MultiDiGraph`` when the file says ``multigraph``): every distinct arc counts once per
end on a simple graph, every link on a multigraph, a self-loop twice. Ties keep the file's
node order (a stable sort). Nodes that accumulate links mechanically are skipped, because
they are not the abstractions a reader asks about:

- file nodes: the label is the source file's name (or a directory-qualified suffix of its
  path), or a method stub ``.name()``, or a function ``name()`` with at most one link;
- concept nodes: no source file, or one whose last path part has no extension;
- JSON keys: a generic key label (``name``, ``version``, ...) in a ``.json`` source;
- builtin and framework names (``str``, ``Path``, ``Mock``, ``SwiftUI``, ...).

``exclude_hubs_percentile`` (0-100) also skips nodes whose degree is above that percentile
of the degree distribution (graphify's hub cut: the value at index ``int(N * p / 100) - 1``
of the sorted degrees, at least index 0). The list stops once ``top_n`` nodes are kept,
checked after adding, so ``top_n`` below 1 still lists one node, as graphify does.
"""

from __future__ import annotations

import json
from typing import Any

from kgservice.graphify.loader import Graph
from kgservice.graphify.scoring import sanitize
from kgservice.graphify.seeds import is_file_label

HEADER = "God nodes (most connected):"

# names that show up as annotation-derived nodes in code graphs (Python builtins, typing and
# mock names, Swift / Foundation / SwiftUI symbols): graphify leaves them out of the ranking
BUILTIN_NOISE_LABELS = frozenset("""
str int float bool bytes bytearray complex object True False
MagicMock Mock AsyncMock NonCallableMock NonCallableMagicMock PropertyMock patch sentinel
Path Any Optional List Dict Set Tuple Union Callable Type ClassVar Final Literal Protocol
Counter defaultdict OrderedDict datetime Enum os sys re json io abc typing
Foundation SwiftUI UIKit AppKit Combine String Int Double Float Bool Data URL Date UUID
Sendable Codable Decodable Encodable Equatable Hashable Identifiable Comparable AnyObject Error LocalizedError
NSObject NSString NSError NSLock View Color Font DispatchQueue
""".split())

# generic keys of JSON / package manifests, lowercased
JSON_NOISE_LABELS = frozenset("""
start end name id type properties value key data items title description version
dependencies devdependencies peerdependencies optionaldependencies bundleddependencies bundledependencies
""".split())


def _is_file_node(d: dict, degree: int) -> bool:
    label = d.get("label", "")
    if not label:
        return False
    label = str(label)  # a non-string label crashes graphify here; we rank it like any other
    source_file = d.get("source_file", "")
    if source_file and is_file_label(label, str(source_file)):
        return True
    if label.startswith(".") and label.endswith("()"):
        return True
    return label.endswith("()") and degree <= 1


def _is_concept_node(d: dict) -> bool:
    source = d.get("source_file", "")
    if not source:
        return True
    return "." not in str(source).split("/")[-1]


def _is_json_key_node(d: dict) -> bool:
    if not str(d.get("source_file") or "").lower().endswith(".json"):
        return False
    return str(d.get("label") or "").strip().lower() in JSON_NOISE_LABELS


def _is_noise_label(d: dict) -> bool:
    label = d.get("label", "")
    try:
        return label in BUILTIN_NOISE_LABELS
    except TypeError:  # an unhashable label (a list, a dict) is no builtin name
        return False


def god_nodes(g: Graph, top_n: int = 10, exclude_hubs_percentile: float | None = None,
              multigraph: bool | None = None) -> list[dict[str, Any]]:
    """``[{"id", "label", "degree"}]``, most connected first; ``label`` as stored (None for a
    null label, the id when there is none). ``multigraph`` overrides the file's flag (graphify's
    MCP server counts parallel links even in a file that says ``multigraph: false``)."""
    multi = g.multigraph if multigraph is None else multigraph
    degree = {n: g.degree(n, directed=True, multigraph=multi) for n in g.order}
    ceiling: int | None = None
    if exclude_hubs_percentile is not None and degree:
        ordered = sorted(degree.values())
        ceiling = ordered[max(0, int(len(ordered) * exclude_hubs_percentile / 100) - 1)]
    out: list[dict[str, Any]] = []
    for nid in sorted(g.order, key=lambda n: degree[n], reverse=True):  # stable: ties in file order
        deg = degree[nid]
        if ceiling is not None and deg > ceiling:
            continue
        d = g.attrs[nid]
        if _is_file_node(d, deg) or _is_concept_node(d) or _is_json_key_node(d) or _is_noise_label(d):
            continue
        out.append({"id": nid, "label": d.get("label", nid), "degree": deg})
        if len(out) >= top_n:
            break
    return out


def render_text(gods: list[dict[str, Any]]) -> str:
    """graphify's text: a header, then ``  <rank>. <label> - <degree> edges`` (a null label is ``None``)."""
    return "\n".join([HEADER] + [f"  {i}. {sanitize(str(n['label']))} - {n['degree']} edges"
                                 for i, n in enumerate(gods, 1)])


def render_json(gods: list[dict[str, Any]]) -> str:
    """graphify's ``--json``: the list itself, indented by 2, non-ASCII escaped."""
    return json.dumps(gods, indent=2)
