"""Extraction: schema, modes, content ids, chunking, the shared path (invariant 1), resolution."""

from __future__ import annotations

import json

import pytest

from kgservice.extraction import (
    Extraction,
    Resolver,
    chunk_text,
    extract_key_query,
    extract_text,
    extraction_messages,
    to_units,
)
from kgservice.ids import content_unit_id, node_id
from kgservice.llm import LLM, LLMOutputError
from kgservice.notation import format_unit

SENT = "According to the WHO, tobacco causes more than 8 million deaths each year."


def rules_llm() -> LLM:
    return LLM("kgoffline/rules", retry_wait=0.0, repair_attempts=1)


def test_detail_keeps_modifiers_summary_drops_them(kb, boundary):
    llm = rules_llm()
    detail = to_units(extract_text(llm, SENT, "detail"), kb.lexicon, doc="d.txt", mode="detail")
    summary = to_units(extract_text(llm, SENT, "summary"), kb.lexicon, doc="d.md", mode="summary")
    assert [format_unit(u, with_id=False) for u in detail] == [
        "{tobacco} [causes] (more than 8 million deaths each year)\n    ()[source] {WHO}"]
    assert [format_unit(u, with_id=False) for u in summary] == ["{tobacco} [causes] (more than 8 million deaths each year)"]
    (d,) = detail
    assert d.family == "导致" and d.kind == "content" and d.mode == "detail" and d.doc == "d.txt"
    assert d.id == content_unit_id(format_unit(d, with_id=False))  # content-hash id, like the parser's
    assert boundary.tasks() == ["extract", "extract"]


def test_schema_rejects_malformed_units():
    bad = [
        {"units": [{"subject": "x", "predicate": "is a", "args": []}]},  # no argument
        {"units": [{"subject": "x", "predicate": "is a", "args": [{"node": "y", "literal": "z"}]}]},  # two kinds
        {"units": [{"subject": "x", "predicate": "is a", "args": [{"node": "y"}], "supersedes": ["u9"]}]},  # dangling
        {"units": [{"id": "a", "subject": "x", "predicate": "p", "args": [{"node": "y"}], "supersedes": ["b"]},
                   {"id": "b", "subject": "x", "predicate": "p", "args": [{"node": "z"}], "supersedes": ["a"]}]},  # cycle
        {"units": [{"subject": "x" * 200, "predicate": "p", "args": [{"node": "y"}]}]},  # a sentence, not a label
    ]
    for obj in bad:
        with pytest.raises(ValueError):
            Extraction.model_validate(obj)


def test_local_ids_become_content_ids(kb):
    ex = Extraction.model_validate({"units": [
        {"id": "old", "subject": "Python 3.12", "predicate": "is latest release of", "args": [{"node": "Python"}]},
        {"id": "new", "subject": "Python 3.13", "predicate": "is latest release of", "args": [{"node": "Python"}],
         "supersedes": ["old"], "mods": [{"slot": "year", "literal": "2024"}]}]})
    old, new = to_units(ex, kb.lexicon, doc="x.md", mode="summary")
    assert new.supersedes == (old.id,) and old.id.startswith("u-")
    report = kb.ingest_units([old, new])
    assert report.units_added == 2
    assert kb.ingest_units(to_units(ex, kb.lexicon, doc="y.md", mode="summary")).units_unchanged == 2  # idempotent


def test_source_mirror_is_rejected_after_repairs(kb, boundary, script):
    script.override_task("extract", lambda p: {"units": [
        {"subject": "tobacco", "predicate": "says", "args": [{"literal": p["text"].rstrip(".")}]}]})
    with pytest.raises(LLMOutputError, match="copies the source text"):
        extract_text(rules_llm(), SENT, "detail")
    assert boundary.count == 2  # first reply + one repair request


def test_chunking_keeps_every_sentence_whole():
    sentences = [f"Sentence number {i} says that topic {i} relates to topic {i + 1}." for i in range(60)]
    text = "# Title\n\n" + " ".join(sentences[:30]) + "\n\n" + " ".join(sentences[30:]) + "\n\n吸烟导致肺癌。" * 3
    chunks = chunk_text(text, max_chars=400)
    assert len(chunks) > 5 and all(len(c.text) <= 400 for c in chunks)
    joined = "\n".join(c.text for c in chunks)
    assert all(s in joined for s in sentences)  # no sentence cut in half
    assert chunks[0].section == "Title" and chunks[-1].text.endswith("吸烟导致肺癌。")
    assert chunk_text("short text") == [chunk_text("short text")[0]] and chunk_text("short text")[0].index == 0


def test_ingest_and_query_share_one_extraction_path(kb, boundary):
    """Invariant 1: the question goes through the same prompt, schema and id normalisation as a text."""
    llm = rules_llm()
    units = to_units(extract_text(llm, "SMOKING causes lung cancer.", "summary"), kb.lexicon, doc="a.md", mode="summary")
    kb.ingest_units(units)
    kq = extract_key_query(llm, kb.lexicon, "What does smoking cause?")
    assert kq.node_ids == ["smoking"] and kb.resolve_node("Smoking") == "smoking"
    assert {n.id for n in kb.store.get_nodes(kq.node_ids)} == {"smoking"}  # same id -> same node
    assert kq.predicates == [{"predicate": "cause", "family": "导致", "kind": "content"}]
    ingest_sys = extraction_messages("x", "summary")[0]["content"]
    query_sys = extraction_messages("x", "query")[0]["content"]
    common = ingest_sys.split("## mode:")[0].split("Mode **summary**")[0]
    assert query_sys.startswith(common.strip())  # one prompt file, one schema; only the mode section differs
    # one node id -> one vector: every entry/derived node has exactly one vector, keyed by its id
    ids = {n.id for n in kb.store.iter_nodes() if n.kind.value != "literal"}
    assert kb.vectors.ids() == ids


def _extraction(units):
    return Extraction.model_validate({"units": units})


def test_resolution_exact_synonym_name_and_llm(kb, boundary, script):
    """Exact ids and stated synonyms first; then the name's structure: a plural is the same node
    with no question, a qualified name is asked once and remembered, a different number or
    different words are never asked, however close the vectors (0.855 / 0.794 here)."""
    from kgservice.extraction.decisions import MergeDecisions
    from kgservice.notation import parse_units

    kb.ingest_units(parse_units("{lung cancer} [is a] {cancer}\n{Python 3.12} [is a] {Python release}\n"
                                "{Seattle, Washington} [has] {Space Needle}", kb.lexicon))
    asked = []
    script.override_task("same_concept", lambda p: asked.append((p["new"], p["existing"], p["relation"]))
                         or {"same": True, "reason": "the same city"})
    ex = _extraction([
        {"subject": "Lung Cancer", "predicate": "is a", "args": [{"node": "disease"}]},  # exact id
        {"subject": "lung cancers", "predicate": "causes", "args": [{"node": "death"}]},  # a plural: same node
        {"subject": "Python 3.13", "predicate": "is a", "args": [{"node": "Python release"}]},  # another number
        {"subject": "肺癌", "predicate": "同义", "args": [{"node": "lung cancer"}]},  # declared ≡
        {"subject": "Seattle", "predicate": "receives", "args": [{"node": "snowfall"}]},  # the bare name
    ])
    decisions = MergeDecisions(None)
    r = Resolver(kb.store, kb.lexicon, kb.embedder, kb.vectors, rules_llm(), auto=0.97, ask=0.75,
                 labels=kb.entry_finder.index, decisions=decisions)
    rename = r.resolve(ex)
    how = {x.label: x.how for x in r.log}
    assert how["Lung Cancer"] == "exact" and how["Python release"] == "exact" and how["肺癌"] == "synonym"
    assert how["lung cancers"] == "name" and rename["lung cancers"] == "lung cancer"
    assert how["Python 3.13"] == "new" and "Python 3.13" not in rename
    assert how["Seattle"] == "name+llm" and rename["Seattle"] == "Seattle, Washington"
    assert asked == [("Seattle", "Seattle, Washington", "qualifier")] and boundary.tasks() == ["same_concept"]
    units = to_units(ex, kb.lexicon, doc="t.md", mode="summary", rename=rename)
    assert format_unit(units[1], with_id=False) == "{lung cancer} [causes] {death}"
    # the next document (a new resolver) gets the remembered answer, with no call
    again = Resolver(kb.store, kb.lexicon, kb.embedder, kb.vectors, rules_llm(), labels=kb.entry_finder.index,
                     decisions=decisions)
    assert again.resolve(_extraction([{"subject": "Seattle", "predicate": "p", "args": [{"node": "x"}]}])) == {
        "Seattle": "Seattle, Washington"}
    assert again.log[0].how == "remembered" and boundary.count == 1


SEATTLE = "{Seattle, Washington} [has] {Space Needle}"
BARE_SEATTLE = [{"subject": "Seattle", "predicate": "receives", "args": [{"node": "snowfall"}]}]


@pytest.mark.parametrize("kb", ["neo4j"], indirect=True)
def test_a_pair_one_server_asked_is_never_asked_by_another_of_the_store(kb, boundary, script, tmp_path):
    """Two knowledge bases on one Neo4j, each with its own data directory (two servers): the
    decision lives in the store, so the second never asks the pair the first asked."""
    import os

    from kgservice.notation import parse_units
    from kgservice.service import KnowledgeBase
    from tests.pipeline.conftest import make_settings

    kb.ingest_units(parse_units(SEATTLE, kb.lexicon))
    script.override_task("same_concept", lambda p: {"same": True, "reason": "the same city"})
    assert Resolver.for_kb(kb, rules_llm()).resolve(_extraction(BARE_SEATTLE)) == {"Seattle": "Seattle, Washington"}
    assert boundary.tasks() == ["same_concept"]
    other = KnowledgeBase(make_settings(tmp_path / "other", backend="neo4j", neo4j_uri=os.environ["KG_TEST_NEO4J_URI"],
                                        neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"),
                                        neo4j_password=os.environ.get("NEO4J_PASSWORD")))
    try:
        r = Resolver.for_kb(other, rules_llm())
        assert r.resolve(_extraction(BARE_SEATTLE)) == {"Seattle": "Seattle, Washington"}
        assert {x.label: x.how for x in r.log}["Seattle"] == "remembered" and boundary.tasks() == ["same_concept"]
    finally:
        other.close()


@pytest.mark.parametrize("kb", ["embedded"], indirect=True)
def test_decisions_an_older_data_directory_kept_move_into_the_store(kb, boundary):
    """``resolution.sqlite3`` (where decisions were kept before) is read once into the store."""
    import sqlite3

    from kgservice.notation import parse_units

    path = kb.settings.data_dir / "resolution.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE decisions (a TEXT NOT NULL, b TEXT NOT NULL, same INTEGER NOT NULL, reason TEXT, "
               "model TEXT, decided REAL NOT NULL, PRIMARY KEY (a, b))")
    db.execute("INSERT INTO decisions VALUES ('seattle', 'seattle washington', 1, 'the city', 'm', 1765000000.0)")
    db.commit()
    db.close()
    kb.ingest_units(parse_units(SEATTLE, kb.lexicon))
    r = Resolver.for_kb(kb, rules_llm())
    assert r.resolve(_extraction(BARE_SEATTLE)) == {"Seattle": "Seattle, Washington"}
    assert {x.label: x.how for x in r.log}["Seattle"] == "remembered" and boundary.count == 0
    assert not path.exists() and path.with_name("resolution.sqlite3.imported").exists()
    assert kb.store.merge_decision("seattle", "seattle washington").decided == "2025-12-06T05:46:40+00:00"


def test_query_mode_reads_key_nodes_and_predicates(kb, boundary):
    kq = extract_key_query(rules_llm(), kb.lexicon, "吸烟会导致哪些疾病？")
    assert [n["label"] for n in kq.nodes] == ["吸烟", "疾病"] and kq.node_ids == [node_id("吸烟"), node_id("疾病")]
    assert kq.families == {"导致"}
    payload = json.loads(extraction_messages("q", "query")[1]["content"])
    assert payload == {"task": "extract", "mode": "query", "text": "q"}
