"""What an ingest stores in the vector store for the nodes it adds (issue 17).

The embedded graph store hands the ingest the labels of the nodes it just added
(``IngestReport.new_labels``), so ``embed_nodes`` does not read them back; the vectors must
be exactly what reading them back gave, including a node that a later unit of the same batch
turned from entry into derived. Payloads carry the node id alone (label and kind live in the
graph; docs/DESIGN.md §2).
"""

from __future__ import annotations

import pytest

from kgservice.config import Settings
from kgservice.model import IngestReport
from kgservice.notation import parse_units
from kgservice.service import KnowledgeBase
from kgservice.vectors import edge_available, point_id

BACKENDS = [pytest.param("edge", marks=pytest.mark.skipif(not edge_available(), reason="no qdrant-edge-py")),
            "qdrant"]
# {free-threaded cpython} is an argument (entry) in #a1, then the subject of [narrows] (derived) in #b2;
# {pypy} the other way round; {fast} is a literal-free plain entry node
UNITS = """#a1 {python} [has] {free-threaded CPython}
#b2 {free-threaded CPython} [narrows] {CPython}
#a3 {PyPy} [narrows] {python}
#b4 {speed} [of] {PyPy} (high)
"""


def _payloads(kb: KnowledgeBase, ids: list[str]) -> dict[str, dict]:
    vs = kb.vectors
    pids = [point_id(i) for i in ids]
    if hasattr(vs, "_shard"):
        recs = vs._shard.retrieve(pids, with_payload=True, with_vector=False)
    else:
        recs = vs._client.retrieve(vs.collection, ids=pids, with_payload=True)
    return {r.payload["node_id"]: dict(r.payload) for r in recs}


@pytest.mark.parametrize("backend", BACKENDS)
def test_ingest_embeds_new_nodes_without_reading_them_back(tmp_path, backend, monkeypatch):
    kb = KnowledgeBase(Settings(data_dir=tmp_path / "kb", embedder="hash:32", vector_backend=backend))
    units = parse_units(UNITS, kb.lexicon)

    def no_reads(ids):  # the store already said what it added
        raise AssertionError(f"embed_nodes read back {len(list(ids))} node(s)")

    monkeypatch.setattr(kb.store, "get_nodes", no_reads)
    report = kb.ingest_units(units)
    monkeypatch.undo()

    new = report.new_embeddable_nodes
    nodes = {n.id: n for n in kb.store.get_nodes(new)}
    assert set(new) == {"python", "free-threaded cpython", "cpython", "pypy", "speed"}
    assert nodes["free-threaded cpython"].kind.value == "derived" and nodes["pypy"].kind.value == "derived"
    assert report.new_labels == {n.id: n.label for n in nodes.values()}
    # exactly the payloads (and vectors) the read-back path stores
    assert _payloads(kb, new) == {n.id: {"node_id": n.id} for n in nodes.values()}
    got = kb.vectors.get_vectors(new)
    want = kb.embedder.embed([nodes[i].label for i in new])
    for i, nid in enumerate(new):
        assert got[nid] == pytest.approx(want[i], abs=1e-6)
    # the labels ride along in memory only: the report's JSON is as before
    assert set(report.model_dump()) == set(IngestReport().model_dump()) and "new_labels" not in report.model_dump_json()
    kb.close()


def test_embed_nodes_reads_the_store_when_not_told_the_labels(tmp_path):
    """kg doctor --repair and restore pass node ids only: the labels come from the store, and
    ids the store does not have are skipped."""
    kb = KnowledgeBase(Settings(data_dir=tmp_path / "kb", embedder="hash:32"))
    report = kb.ingest_units(parse_units(UNITS, kb.lexicon), embed=False)
    assert kb.vectors.count() == 0
    partial = {"python": "WRONG"}  # covers only some ids: not trusted, the store is read
    assert kb.embed_nodes([*report.new_embeddable_nodes, "no such node"], known=partial) == 5
    assert _payloads(kb, ["python"])["python"] == {"node_id": "python"}
    assert kb.vectors.get_vectors(["python"])["python"] == pytest.approx(kb.embedder.embed(["python"])[0], abs=1e-6)
    assert kb.vectors.ids() == set(report.new_embeddable_nodes)
    kb.close()


def test_both_stores_hand_over_the_labels_they_stored(bare_kb, monkeypatch):
    """The embedded store and Neo4j's one-transaction path (issue 17) both fill ``new_labels``
    with exactly the labels they stored, so the ingest embeds without reading nodes back; on
    Neo4j a staged batch (nodes created outside the batch transaction) leaves it empty and the
    labels are read back."""
    kb = bare_kb

    def no_reads(ids):
        raise AssertionError(f"embed_nodes read back {len(list(ids))} node(s)")

    monkeypatch.setattr(kb.store, "get_nodes", no_reads)
    report = kb.ingest_units(parse_units(UNITS, kb.lexicon))
    monkeypatch.undo()
    nodes = {n.id: n for n in kb.store.get_nodes(report.new_embeddable_nodes)}
    assert len(nodes) == 5 and report.new_labels == {n.id: n.label for n in nodes.values()}
    assert report.new_labels["free-threaded cpython"] == "free-threaded CPython"  # the stored case, not the id
    got = kb.vectors.get_vectors(list(nodes))
    for nid, n in nodes.items():
        assert got[nid] == pytest.approx(kb.embedder.embed([n.label])[0], abs=1e-6)

    if kb.store.backend == "neo4j":
        monkeypatch.setattr(kb.store, "stage_units", 1)
        staged = kb.ingest_units(parse_units("#c1 {Jython} [narrows] {python}\n#c2 {GraalPy} [narrows] {python}\n",
                                             kb.lexicon))
        assert set(staged.new_embeddable_nodes) == {"jython", "graalpy"} and staged.new_labels == {}
        assert kb.vectors.get_vectors(["jython"])["jython"] == pytest.approx(kb.embedder.embed(["Jython"])[0], abs=1e-6)


def test_vectors_land_on_their_own_nodes_across_upsert_groups(tmp_path):
    """embed_nodes upserts the model's batches in groups of ~1024 rows (no one big join): every
    node, in every group and in the uneven last one, gets its own label's vector."""
    kb = KnowledgeBase(Settings(data_dir=tmp_path / "kb", embedder="hash:32"))
    text = "".join(f"#u{i} {{item {i}}} [is a] {{thing}}\n" for i in range(2345))
    report = kb.ingest_units(parse_units(text, kb.lexicon), embed=False)
    ids = report.new_embeddable_nodes
    assert kb.embed_nodes(ids, batch=100, known=report.new_labels) == len(ids) == 2346
    got = kb.vectors.get_vectors(ids)
    want = kb.embedder.embed([report.new_labels[i] for i in ids])
    assert all(got[nid] == pytest.approx(want[k], abs=1e-6) for k, nid in enumerate(ids))
    kb.close()


def test_the_collector_is_held_off_while_an_in_process_model_embeds_an_ingest(tmp_path):
    """kb.ingest_units keeps the cyclic GC off through the graph write and the embedding when
    the model runs in-process (its first full pass would otherwise walk the caller's parsed
    batch), and leaves it on for a hosted model (whose network retries make cycles)."""
    import gc

    from kgservice.vectors.embedder import HashEmbedder, LiteLLMEmbedder, runs_in_process

    seen: list[bool] = []

    class Local(HashEmbedder):
        def embed(self, texts):
            seen.append(gc.isenabled())
            return super().embed(texts)

    class Hosted(LiteLLMEmbedder):  # embeds with the hash model: no network in tests
        def embed(self, texts):
            seen.append(gc.isenabled())
            return HashEmbedder(32).embed(texts)

    assert gc.isenabled()
    hosted = Hosted("example/embedder", dim=32)
    assert runs_in_process(Local(32)) and not runs_in_process(hosted)
    for embedder, held in ((Local(32), True), (hosted, False)):
        seen.clear()
        kb = KnowledgeBase(Settings(data_dir=tmp_path / type(embedder).__name__, embedder="hash:32"))
        kb.parts.__dict__["embedder"] = embedder
        kb.ingest_units(parse_units(UNITS, kb.lexicon))
        assert seen and all(on is not held for on in seen), (type(embedder).__name__, seen)
        assert gc.isenabled()  # back on after the batch
        kb.close()
