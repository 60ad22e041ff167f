"""The graphify mirror kept in Neo4j (kgservice/export/shared_mirror.py, stores/neo4j/mirror.py):
one lease per version, a compare-and-set publish, and of several processes wanting the same
version exactly one builds it while the others read what it stored."""

from __future__ import annotations

import json
import threading

import pytest

from kgservice.export.shared_mirror import SharedMirror
from kgservice.stores.neo4j.mirror import Neo4jMirrorArtefact
from tests.neo4j_helpers import wipe_all

pytestmark = pytest.mark.neo4j


@pytest.fixture
def artefact(neo4j_connection):
    wipe_all(neo4j_connection)
    return Neo4jMirrorArtefact(neo4j_connection)


def test_one_lease_per_version_and_publish_is_compare_and_set(artefact):
    assert artefact.state() is None
    assert artefact.claim("a", 5, lease_s=600)
    assert not artefact.claim("b", 5, lease_s=600)  # a holds it
    assert artefact.state().building == 5 and artefact.state().leased
    assert not artefact.publish("b", 5, "d", [b"x"])  # not b's lease
    assert artefact.publish("a", 5, "d5", [b"x", b"y"])
    st = artefact.state()
    assert (st.version, st.digest, st.chunks, st.owner, st.leased) == (5, "d5", 2, None, False)
    assert artefact.chunks(5) == [b"x", b"y"]
    assert not artefact.claim("b", 5, lease_s=600) and not artefact.claim("b", 4, lease_s=600)  # stored already
    assert not artefact.publish("b", 4, "d4", [b"old"])  # never replaced by an older version
    assert artefact.claim("b", 6, lease_s=600)
    artefact.release("b")  # a failed build gives the lease back
    assert artefact.claim("a", 6, lease_s=600)
    assert artefact.publish("a", 6, "d6", [b"z"])
    assert artefact.chunks(5) == [] and artefact.chunks(6) == [b"z"]  # the older pieces are gone


def test_an_expired_lease_passes_on(artefact):
    assert artefact.claim("a", 1, lease_s=0)  # ended as soon as taken: a builder that died
    assert artefact.claim("b", 1, lease_s=600)
    assert not artefact.publish("a", 1, "d", [b"late"])  # the dead builder's late publish is refused
    assert artefact.publish("b", 1, "d", [b"ok"])


def test_of_processes_wanting_one_version_one_builds(artefact, tmp_path):
    started, go = threading.Event(), threading.Event()
    built: list[str] = []

    def build_as(owner: str):
        def build() -> dict:
            built.append(owner)
            started.set()
            go.wait(60)  # hold the lease while the others ask for the same version
            return {"nodes": [{"id": "n1"}], "links": [], "by": owner}
        return build

    mirrors = [SharedMirror(artefact, build_as(f"p{i}"), owner=f"p{i}", poll_s=0.05) for i in range(3)]
    outcomes: dict[int, str] = {}

    def fetch(i: int) -> None:
        outcomes[i] = mirrors[i].fetch(tmp_path / f"p{i}" / "graph.json", 7)

    threads = [threading.Thread(target=fetch, args=(i,)) for i in range(3)]
    threads[0].start()
    assert started.wait(60)
    for t in threads[1:]:
        t.start()
    go.set()
    for t in threads:
        t.join(120)
    assert built == ["p0"] and outcomes == {0: "built", 1: "loaded", 2: "loaded"}
    assert [(m.builds, m.loads) for m in mirrors] == [(1, 0), (0, 1), (0, 1)]
    files = [json.loads((tmp_path / f"p{i}" / "graph.json").read_text("utf-8")) for i in range(3)]
    assert files[0] == files[1] == files[2] == {"nodes": [{"id": "n1"}], "links": [], "by": "p0"}


def test_a_failed_build_lets_another_build(artefact, tmp_path):
    def broken() -> dict:
        raise RuntimeError("store went away")

    with pytest.raises(RuntimeError):
        SharedMirror(artefact, broken, owner="a").fetch(tmp_path / "a.json", 3)
    assert artefact.state().owner is None and not artefact.state().leased
    other = SharedMirror(artefact, lambda: {"ok": 1}, owner="b")
    assert other.fetch(tmp_path / "b.json", 3) == "built"  # no wait for a's lease
