"""`save-result` files and feeding saved answers back into the graph as units."""

from datetime import datetime, timezone

import pytest

from kgservice.graphify.memory import (
    load_memory_docs,
    memory_units,
    parse_memory_doc,
    save_result,
    yaml_quote,
    yaml_unquote,
)

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)


def test_file_layout(tmp_path):
    p = save_result("What causes lung cancer?", "Smoking, mostly.", tmp_path / "memory", query_type="query",
                    nodes=["smoking", "lung cancer"], outcome="useful", now=NOW)
    assert p.parent == tmp_path / "memory"
    assert p.name.startswith("query_20260301_120000_") and p.name.endswith("_what_causes_lung_cancer.md")
    assert p.read_text(encoding="utf-8") == "\n".join([
        "---",
        'type: "query"',
        'date: "2026-03-01T12:00:00+00:00"',
        'question: "What causes lung cancer?"',
        'contributor: "graphify"',
        'outcome: "useful"',
        'source_nodes: ["smoking", "lung cancer"]',
        "---",
        "",
        "# Q: What causes lung cancer?",
        "",
        "## Answer",
        "",
        "Smoking, mostly.",
        "",
        "## Outcome",
        "",
        "- Signal: useful",
        "",
        "## Source Nodes",
        "",
        "- smoking",
        "- lung cancer",
    ])


def test_two_saves_never_share_a_file(tmp_path):
    a = save_result("q", "a", tmp_path, now=NOW)
    b = save_result("q", "a", tmp_path, now=NOW)
    assert a != b and len(list(tmp_path.glob("*.md"))) == 2


def test_hostile_values_round_trip():
    nasty = 'he said "hi"\\ then\nnew: line\t\x01\u2028end'
    assert yaml_quote(nasty) == 'he said \\"hi\\"\\\\ then\\nnew: line\\t\\x01\\Lend'
    assert yaml_unquote(yaml_quote(nasty)) == nasty


def test_parse_and_load(tmp_path):
    save_result('tricky "q"', "x", tmp_path, nodes=["a", 'b "c"'], outcome="corrected", correction="y\nz", now=NOW)
    (tmp_path / "notes.md").write_text("no frontmatter here")
    docs = load_memory_docs(tmp_path)
    assert len(docs) == 1
    d = docs[0]
    assert (d["question"], d["outcome"], d["correction"], d["source_nodes"]) == ('tricky "q"', "corrected", "y\nz",
                                                                                 ["a", 'b "c"'])
    assert parse_memory_doc("# no frontmatter") is None


def test_invalid_outcome(tmp_path):
    with pytest.raises(ValueError):
        save_result("q", "a", tmp_path, outcome="great")


def test_cli_nodes_take_several_values(ours, tmp_path):
    r = ours("save-result", "--question", "Q", "--answer", "A", "--nodes", "smoking", "lung cancer", "COPD",
             "--outcome", "useful", "--memory-dir", tmp_path / "m")
    assert r.exit_code == 0 and r.stdout.startswith(f"Saved to {tmp_path / 'm'}")
    assert load_memory_docs(tmp_path / "m")[0]["source_nodes"] == ["smoking", "lung cancer", "COPD"]


def test_cli_answer_file_and_errors(ours, tmp_path):
    (tmp_path / "answer.md").write_text("  from a file \n")
    r = ours("save-result", "--question", "Q", "--answer-file", tmp_path / "answer.md", "--memory-dir", tmp_path)
    assert r.exit_code == 0
    assert "\nfrom a file" in next(tmp_path.glob("query_*.md")).read_text()
    r = ours("save-result", "--question", "Q", "--memory-dir", tmp_path)
    assert r.exit_code == 2 and "--answer or --answer-file is required" in r.stderr
    r = ours("save-result", "--question", "Q", "--answer", "A", "--outcome", "great", "--memory-dir", tmp_path)
    assert r.exit_code == 2 and "--outcome must be one of useful, dead_end, corrected" in r.stderr
    r = ours("save-result", "--answer", "A", "--memory-dir", tmp_path)
    assert r.exit_code == 2


def test_memory_units_by_hand(tmp_path, mini_graph):
    save_result("What causes lung cancer?", "Smoking {mostly}.\nSee (WHO).", tmp_path, query_type="query",
                nodes=["smoking", "lit:high", "lung cancer"], outcome="useful", now=NOW)
    lines = memory_units(tmp_path, graph_path=mini_graph)
    uid = lines[0].split(" ", 1)[0]
    assert uid.startswith("#mem-") and len(uid) == len("#mem-") + 12
    assert lines == [
        f"{uid} {{Q: What causes lung cancer?}} [answered by] (Smoking {{mostly}}. See (WHO\\).)",
        "    ()[query type] (query)",
        "    ()[outcome] (useful)",
        "    ()[asked on] (2026-03-01T12:00:00+00:00)",
        "    ()[cites] {smoking}",
        "    ()[cites] (high)",  # a literal node, cited by id, comes back as its literal
        "    ()[cites] {lung cancer}",
    ]
    assert memory_units(tmp_path, graph_path=mini_graph) == lines  # same ids every time


def test_saved_answers_become_nodes_on_the_next_ingest(tmp_path, mini_graph):
    from kgservice.families import Lexicon
    from kgservice.graphify.loader import load_graph
    from kgservice.notation import parse_units
    from tests.graphify.conftest import FIXTURES, build_graph

    mem = tmp_path / "memory"
    save_result("What causes lung cancer?", "Smoking.", mem, nodes=["smoking", "lung cancer"], outcome="useful",
                now=NOW)
    save_result("Is COPD curable?", "No.", mem, nodes=["COPD"], outcome="dead_end", now=NOW)
    units_file = tmp_path / "memory.units"
    units_file.write_text("\n".join(memory_units(mem, graph_path=mini_graph)) + "\n", encoding="utf-8")
    assert len(parse_units(units_file.read_text(encoding="utf-8"), Lexicon.load())) == 2
    project = tmp_path / "p"
    gp = build_graph([(FIXTURES / "mini.units", "mini.units"), (units_file, "graphify-out/memory")], project)
    g = load_graph(gp)
    q = "q: what causes lung cancer?"
    assert g.label(q) == "Q: What causes lung cancer?"
    cited = {g.links[i].tgt: g.links[i].data["relation"] for i in g.out_links(q)}
    assert cited["smoking"] == "cites" and cited["lung cancer"] == "cites"
    assert cited["lit:useful"] == "outcome"
