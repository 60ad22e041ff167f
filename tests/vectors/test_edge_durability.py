"""The embedded vector store without a write-ahead log (issue 17): a write is durable once
flushed, a writer killed between its upsert and its flush leaves a marker, the shard reopens
at its last flush, and the knowledge base's next write embeds the lost vectors again.

The crash is real: a child process ingests, and is killed (``os._exit``) at the moment the
knowledge base asks the store to flush - after the vectors were handed to qdrant-edge.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kgservice.admin import doctor
from kgservice.config import Settings
from kgservice.notation import parse_units
from kgservice.service import KnowledgeBase
from kgservice.stores.changelog import SqliteChangeFeed
from kgservice.vectors import EdgeVectorStore, edge_available

pytestmark = pytest.mark.skipif(not edge_available(), reason="no qdrant-edge-py")
ROOT = Path(__file__).resolve().parents[2]
FIRST = "".join(f"#f{i} {{alpha {i}}} [has] {{beta {i}}}\n" for i in range(20))
SECOND = "".join(f"#s{i} {{gamma {i}}} [has] {{delta {i}}}\n" for i in range(15))
THIRD = "#t1 {epsilon} [has] {zeta}\n"


def _kb(path: Path) -> KnowledgeBase:
    return KnowledgeBase(Settings(data_dir=path, embedder="hash:32", vector_backend="edge"))


def _crash_during_second_ingest(data: Path) -> None:
    """FIRST lands with its vectors flushed; SECOND's vectors reach the shard, then the process
    dies where the knowledge base would flush them."""
    code = textwrap.dedent(f"""
        import os
        from pathlib import Path
        from kgservice.config import Settings
        from kgservice.notation import parse_units
        from kgservice.service import KnowledgeBase
        from kgservice.vectors import EdgeVectorStore

        kb = KnowledgeBase(Settings(data_dir=Path({str(data)!r}), embedder="hash:32", vector_backend="edge"))
        kb.ingest_units(parse_units({FIRST!r}, kb.lexicon))
        kb.vectors  # held open from here on, as a server holds it: only flush() makes writes durable
        real = EdgeVectorStore.upsert
        def upsert_then_die(self, *a, **k):
            real(self, *a, **k)
            print("upserted", flush=True)
            os._exit(9)
        EdgeVectorStore.upsert = upsert_then_die
        kb.ingest_units(parse_units({SECOND!r}, kb.lexicon))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 9 and "upserted" in p.stdout, p.stderr[-2000:]


def test_a_clean_write_leaves_no_marker_and_no_loss(tmp_path):
    kb = _kb(tmp_path / "kb")
    kb.vectors  # held open: the knowledge base flushes after each batch all the same
    report = kb.ingest_units(parse_units(FIRST, kb.lexicon))
    vs = kb.vectors
    assert isinstance(vs, EdgeVectorStore)
    assert not vs.unflushed_path.exists() and not vs.lost_writes
    kb.close()
    again = _kb(tmp_path / "kb")
    assert not again.vectors.lost_writes
    assert again.vectors.ids() == set(report.new_embeddable_nodes)
    again.close()


def test_a_writer_killed_before_its_flush_loses_only_that_batch_and_the_next_write_restores_it(tmp_path):
    data = tmp_path / "kb"
    _crash_during_second_ingest(data)

    kb = _kb(data)
    nodes = {n.id for n in kb.store.iter_nodes()}
    assert {"gamma 3", "delta 14"} <= nodes  # the graph, written first, has the whole second batch
    vs = kb.vectors
    assert vs.lost_writes and vs.unflushed_path.exists()
    have = vs.ids()
    assert {"alpha 0", "beta 19"} <= have  # the first batch was flushed: kept
    assert not {"gamma 3", "delta 14"} & have  # the shard reopened at its last flush
    found = doctor.check(kb)  # reported meanwhile, with the cause
    assert found.of("nodes_without_vectors") and "stopped before flushing" in found.vector_note
    before = kb.vectors.get_vectors(["alpha 0"])["alpha 0"]

    feed = SqliteChangeFeed(kb.store.dir)
    v0 = feed.version()
    kb.ingest_units(parse_units(THIRD, kb.lexicon))  # the next write restores what was lost first
    changes = feed.since(v0, feed.version())
    # the batch's graph change, then the restore (before the batch's own vectors): the restored
    # nodes can be vector hits again, so every server's cached answers about them go
    assert len(changes) == 2 and "epsilon" in changes[0].touched and "gamma 3" not in changes[0].touched
    assert {"gamma 3", "delta 14"} <= set(changes[1].touched)
    assert kb.vectors.ids() == {n.id for n in kb.store.iter_nodes()}  # every node here is an entry node
    assert not vs.lost_writes and not vs.unflushed_path.exists()
    got = kb.vectors.get_vectors(["gamma 3", "alpha 0"])
    assert got["gamma 3"] == pytest.approx(kb.embedder.embed(["gamma 3"])[0], abs=1e-6)
    assert got["alpha 0"] == pytest.approx(before, abs=1e-6)
    assert not doctor.check(kb).findings
    kb.close()

    again = _kb(data)
    assert not again.vectors.lost_writes and again.vectors.count() == len(nodes) + 2
    again.close()


def test_doctor_repair_restores_the_lost_vectors_and_clears_the_marker(tmp_path):
    data = tmp_path / "kb"
    _crash_during_second_ingest(data)
    kb = _kb(data)
    report = doctor.repair(kb)
    assert report.repaired["vectors_restored"] == 30 and report.repaired["vectors_embedded"] == 0
    assert report.after.ok
    assert not kb.vectors.unflushed_path.exists()
    kb.close()
    again = _kb(data)
    assert not again.vectors.lost_writes
    again.close()
