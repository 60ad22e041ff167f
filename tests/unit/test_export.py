"""graph.json mirror: plain networkx reads it; fields graphify needs are there."""

from __future__ import annotations

import json

from networkx.readwrite import json_graph

from kgservice.export.graphjson import write_graph_json
from kgservice.notation import parse_units
from kgservice.stores.embedded import EmbeddedStore

TEXT = """\
#u1 {smoking} [causes] {lung cancer}
    ()[confidence] (medium)
    ()[source] {WHO report}
#u2 {吸烟} [同义] {smoking}
#u3 {Python 3.13} [supersedes] {Python 3.12}
"""


def test_export_loads_in_plain_networkx(tmp_path, lexicon):
    store = EmbeddedStore(tmp_path / "g")
    store.ingest(parse_units(TEXT, lexicon, doc="demo.units"))
    counts = write_graph_json(store, tmp_path / "graph.json")
    data = json.loads((tmp_path / "graph.json").read_text("utf-8"))
    g = json_graph.node_link_graph(data, edges="links")
    # nodes: smoking, lung cancer, lit:medium, who report, 吸烟, python 3.13, python 3.12
    assert g.number_of_nodes() == 7 == counts["nodes"]
    # links: u1 arg (smoking->lung cancer), u1 mods (->lit:medium, ->who report), u2, u3
    assert counts["links"] == 5 and counts["units"] == 3
    node = g.nodes["smoking"]
    for key in ("label", "source_file", "source_location", "file_type", "community", "norm_label"):
        assert key in node
    assert node["source_file"] == "demo.units" and node["source_location"] == "#u1"
    edge = next(l for l in data["links"] if l["unit"] == "u1" and l["target"] == "lung cancer")
    assert (edge["source"], edge["relation"], edge["confidence"], edge["confidence_score"]) == ("smoking", "causes", "INFERRED", 0.7)
    # inverse predicate: Python 3.13 supersedes 3.12 -> edge old -> new
    sup = next(l for l in data["links"] if l["unit"] == "u3")
    assert (sup["source"], sup["target"]) == ("python 3.12", "python 3.13")
    assert {u["id"] for u in data["units"]} == {"u1", "u2", "u3"}
