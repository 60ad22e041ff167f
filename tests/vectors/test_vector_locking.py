"""Who holds a local vector directory, and for how long.

A local vector store (qdrant-edge or qdrant-client local mode) is owned by one open handle at
a time. Before: an ingest opened it with the first embedding batch and kept it until the
process ended, so ``kg search`` / ``kg ask`` in another process were refused for the whole
embedding phase (minutes on a large batch). Now the model runs with no vector lock held; the
lock is taken only for the upsert, and a reader that finds it taken waits (bounded) instead
of failing.
"""

from __future__ import annotations

import threading
import time

import pytest

from kgservice.config import Settings
from kgservice.notation import parse_units
from kgservice.service import KnowledgeBase
from kgservice.vectors import VectorStoreLocked, edge_available

BACKENDS = [pytest.param("edge", marks=pytest.mark.skipif(not edge_available(), reason="no qdrant-edge-py")),
            "qdrant"]
UNITS = "".join(f"#w{i} {{thing {i}}} [has] {{part {i % 7}}}\n" for i in range(40))


def _kb(path, backend: str, wait: float) -> KnowledgeBase:
    return KnowledgeBase(Settings(data_dir=path, embedder="hash:32", vector_backend=backend,
                                  vector_lock_wait=wait))


@pytest.mark.parametrize("backend", BACKENDS)
def test_reader_is_not_locked_out_while_a_writer_embeds(tmp_path, backend):
    writer = _kb(tmp_path / "kb", backend, wait=30)
    report = writer.ingest_units(parse_units(UNITS, writer.lexicon), embed=False)
    new = report.new_embeddable_nodes
    assert len(new) == 47  # 40 things + 7 parts, worked out by hand

    real = writer.embedder.embed
    started, release = threading.Event(), threading.Event()

    def slow(texts):  # the "model": blocks until the test has read the store meanwhile
        started.set()
        assert release.wait(300)  # bounds a hang only
        return real(texts)

    writer.embedder.embed = slow  # type: ignore[method-assign]
    opening = threading.Event()
    real_open = writer.parts.open_vectors

    def open_vectors(*a, **kw):  # the writer's upsert opens the vector dir here (and waits for it)
        opening.set()
        return real_open(*a, **kw)

    writer.parts.open_vectors = open_vectors  # type: ignore[method-assign]
    errors: list[BaseException] = []

    def run() -> None:
        try:
            writer.embed_nodes(new, batch=10)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    t = threading.Thread(target=run)
    t.start()
    try:
        assert started.wait(300)  # bounds a hang only
        reader = _kb(tmp_path / "kb", backend, wait=0)  # no waiting: the dir must be free right now
        assert reader.vectors.count() == 0  # nothing upserted yet, but readable during the embed
        # the writer's upsert now waits for this reader (bounded), not the other way round: once
        # it is opening the directory the reader holds, it cannot have finished
        release.set()
        assert opening.wait(300)  # bounds a hang only
        assert t.is_alive() or errors  # still waiting for the lock the reader holds
        reader.close()
    finally:
        release.set()
        t.join(60)
    assert not errors
    writer.close()
    again = _kb(tmp_path / "kb", backend, wait=0)
    assert again.vectors.ids() == set(new)
    again.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reader_waits_for_a_short_lease_then_gives_up_on_a_held_one(tmp_path, backend):
    holder = _kb(tmp_path / "kb", backend, wait=0)
    assert holder.vectors.count() == 0  # holds the directory open
    waiter = _kb(tmp_path / "kb", backend, wait=0.6)
    t0 = time.monotonic()
    with pytest.raises(VectorStoreLocked):
        waiter.vectors
    waited = time.monotonic() - t0
    assert waited >= 0.4  # it did wait (about 0.6 s: load only makes it longer), then gave up with the clear error
    threading.Timer(0.5, holder.close).start()
    patient = _kb(tmp_path / "kb", backend, wait=300)  # bounds a hang only: the holder lets go after 0.5 s
    assert patient.vectors.count() == 0  # got it once the holder let go
    patient.close()
