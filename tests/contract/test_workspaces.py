"""Workspaces (docs/workspaces.md): two knowledge bases on one data directory or database never
mix, on both backends (on Neo4j: one database, every node carrying its workspace). The same document ingested into two workspaces stays two documents, and no read of
workspace A (ask, expand, search, units, documents, history, neighbours, name resolution)
returns a marker that exists only in workspace B. Every read is also run in B, where it must
find the marker, so an isolation check cannot pass by reading nothing."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from kgservice.config import ConfigError, Settings, load_settings
from kgservice.service import KnowledgeBase
from tests.neo4j_helpers import wipe_all

MARKER = "zqxvortmarker"
SHARED = "#w1 {smoking} [causes] {lung cancer}\n"
ONLY_B = f"#w2 {{smoking}} [causes] {{{MARKER}}}\n#w3 {{{MARKER}}} [part of] {{tobacco smoke}}\n"
DOC = "notes.units"


def _settings(backend: str, data_dir: Path, workspace: str, request: Any, *, wipe: bool = True,
              **more: Any) -> Settings:
    """Settings of ``workspace``; on Neo4j the database is wiped first (``wipe``) and the vectors
    are Neo4j's own vector index, so its workspace filter is what the reads go through."""
    over: dict[str, Any] = {"vector_backend": "edge"}
    if backend == "neo4j":
        if not os.environ.get("KG_TEST_NEO4J_URI") and os.environ.get("CI") != "true":
            pytest.skip("no Neo4j: set KG_TEST_NEO4J_URI (and NEO4J_PASSWORD) after `scripts/neo4j start`")
        if wipe:
            wipe_all(request.getfixturevalue("neo4j_connection"))
        over = {"backend": "neo4j", "neo4j_uri": os.environ["KG_TEST_NEO4J_URI"], "vector_backend": "neo4j",
                "neo4j_user": os.environ.get("KG_NEO4J_USER", "neo4j"),
                "neo4j_password": os.environ.get("NEO4J_PASSWORD")}
    return Settings(data_dir=data_dir, embedder="hash:64", workspace=workspace, **over, **more)


def _text(value: Any) -> str:
    """Everything a read returned, as text to grep (field values, not only ids)."""
    def plain(o: Any) -> Any:
        if hasattr(o, "to_dict"):
            return o.to_dict()
        if hasattr(o, "model_dump"):
            return o.model_dump(mode="json")
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return dataclasses.asdict(o)
        return repr(o)

    return json.dumps(value, default=plain)


def _of_b(text: str) -> bool:
    """Whether a read's text holds something only workspace B stores: the marker or a unit id of B's."""
    return MARKER in text or '"w2"' in text or '"w3"' in text


def _reads(kb: KnowledgeBase) -> dict[str, str]:
    """Every read path of the library front door named in the contract, as text. No read is
    asked with the marker in its input unless only its output is kept (outputs echo inputs)."""
    return {
        "ask": _text(kb.ask("What does smoking cause?")),
        "expand": _text(kb.expand("smoking", mode="directed")),
        "expand_spread": _text(kb.expand("smoking", mode="spread")),
        "search": _text(kb.search(MARKER, threshold=0.0).to_dict()["nodes"]),  # hits only: not the echoed query
        "unit": _text([kb.unit("w1"), kb.unit("w2"), kb.unit("w3")]),
        "neighbors": _text(kb.neighbors("smoking")),
        "resolve": _text(list(kb.resolve_nodes([MARKER, "smoking"]).values())),
        "documents": _text([kb.documents(), kb.document(DOC).view(), kb.provenance("w1")]),
        "history": _text(kb.history()),
        "stats": _text(kb.stats()),
    }


@pytest.mark.parametrize("backend", ["embedded", "neo4j"])
def test_the_same_document_in_two_workspaces_stays_two_and_a_never_sees_b(tmp_path: Path, backend: str, request):
    data = tmp_path / "kg"
    a = KnowledgeBase(_settings(backend, data, "team-a", request))
    b = KnowledgeBase(_settings(backend, data, "team-b", request, wipe=False))
    try:
        a.ingest_document(DOC, SHARED, mode="manual")
        b.ingest_document(DOC, SHARED + ONLY_B, mode="manual")
        # the same document id is one document in each workspace, with that workspace's units
        assert [d.id for d in a.documents()] == [DOC] and [d.id for d in b.documents()] == [DOC]
        assert a.stats()["units"] == 1 and b.stats()["units"] == 3
        seen_a, seen_b = _reads(a), _reads(b)
        leaks = sorted(name for name, text in seen_a.items() if _of_b(text))
        assert leaks == []
        # every read reaches B's own marker where it is stored
        found_b = {name for name, text in seen_b.items() if _of_b(text)}
        assert {"ask", "expand", "unit", "resolve", "documents", "search", "neighbors", "history", "expand_spread"} <= found_b
        # forgetting the document in A leaves B's copy whole
        a.forget([DOC])
        assert a.stats()["units"] == 0 and a.documents() == []
        assert b.stats()["units"] == 3 and [d.id for d in b.documents()] == [DOC]
        assert b.unit("w2") is not None and b.resolve_node(MARKER) is not None
    finally:
        a.close()
        b.close()


def test_the_default_workspace_is_the_data_directory_as_before(tmp_path: Path):
    """A store made before workspaces is the default workspace, unmoved: its files stay where they
    were, and a named workspace beside it starts empty."""
    data = tmp_path / "kg"
    with KnowledgeBase(Settings(data_dir=data, embedder="hash:64", vector_backend="edge")) as old:
        old.ingest_document(DOC, SHARED + ONLY_B, mode="manual")
    assert (data / "graph").is_dir() and not (data / "workspaces").exists()
    with KnowledgeBase(Settings(data_dir=data, embedder="hash:64", vector_backend="edge", workspace="default")) as d:
        assert d.stats()["units"] == 3 and d.resolve_node(MARKER) is not None
    with KnowledgeBase(Settings(data_dir=data, embedder="hash:64", vector_backend="edge", workspace="other")) as o:
        o.init()
        assert o.stats()["units"] == 0 and o.resolve_node(MARKER) is None and o.documents() == []
    assert (data / "workspaces" / "other" / "graph").is_dir()


@pytest.mark.parametrize("name", ["", "Team", "a/b", "../x", "-a", "a" * 64, "café"])
def test_a_workspace_name_is_plain(name: str):
    with pytest.raises(ConfigError, match="workspace"):
        load_settings(env={"KG_WORKSPACE": name} if name else {}, flags={"workspace": name})


def test_kg_workspace_and_the_default():
    assert load_settings(env={}).workspace == "default"
    assert load_settings(env={"KG_WORKSPACE": "team-a"}).workspace == "team-a"
    assert load_settings(env={"KG_WORKSPACE": "team-a"}, flags={"workspace": "b_2"}).workspace == "b_2"
    s = load_settings(env={"KG_WORKSPACE": "team-a", "KG_QDRANT_URL": "http://127.0.0.1:6333"})
    assert s.vector_collection == "kg_nodes-ws-team-a" and s.kb_dir == Path(".kg/workspaces/team-a")


def test_the_cli_takes_workspace_and_kg_workspace(tmp_path: Path):
    """``kg --workspace`` / ``KG_WORKSPACE`` choose the workspace of every command; a read of a
    workspace nobody wrote to is refused (exit 2) rather than creating it."""
    from tests.processes import env_for, kg

    src = tmp_path / "b.units"
    src.write_text(SHARED + ONLY_B, "utf-8")
    env = env_for(tmp_path / "kg")
    done = kg(env, "--workspace", "team-b", "ingest", str(src))
    assert done.returncode == 0, done.stderr
    absent = kg(env, "--workspace", "team-a", "expand", "smoking")
    assert absent.returncode == 2 and "no workspace 'team-a'" in absent.stderr
    assert not (tmp_path / "kg" / "workspaces" / "team-a").exists()
    in_b = kg({**env, "KG_WORKSPACE": "team-b"}, "expand", "smoking")
    assert in_b.returncode == 0 and "w2" in in_b.stdout, in_b.stderr
    assert kg(env, "--workspace", "team-a", "init").returncode == 0
    in_a = kg({**env, "KG_WORKSPACE": "team-a"}, "ask", "What does smoking cause?")
    assert in_a.returncode == 0 and MARKER not in in_a.stdout + in_a.stderr, in_a.stderr
    in_default = kg(env, "docs", "list")
    assert in_default.returncode == 0 and "b.units" not in in_default.stdout, in_default.stdout


def test_neo4j_takes_another_workspace():
    env = {"KG_NEO4J_URI": "bolt://127.0.0.1:9", "NEO4J_PASSWORD": "x"}  # nothing listens there
    assert load_settings(env=env).workspace == "default"
    assert load_settings(env={**env, "KG_WORKSPACE": "team-a"}).workspace == "team-a"


@pytest.mark.parametrize("backend", ["embedded", "neo4j"])
def test_an_ingest_into_a_leaves_b_s_caches_valid(tmp_path: Path, backend: str, request):
    """Each workspace has its own change-log counter: an ingest into A touching the very node B's
    cached answer depends on invalidates nothing of B's (every cache hits again), while the same
    ingest into B itself does (the control: the caches do depend on that node)."""
    def settings(ws: str) -> Settings:
        return _settings(backend, tmp_path / "kg", ws, request, wipe=ws == "team-a",
                         llm_model="kgoffline/rules", llm_model_chosen=True)

    question, more = "What does smoking cause?", "#w9 {smoking} [causes] {cough}\n"

    def use(kb: KnowledgeBase) -> dict[str, tuple[int, int]]:
        kb.ask(question)
        kb.expand_cached("smoking")
        return {name: (c["hits"], c["misses"]) for name, c in kb.cache_stats()["caches"].items()}

    with KnowledgeBase(settings("team-a")) as a, KnowledgeBase(settings("team-b")) as b:
        for kb in (a, b):
            kb.ingest_document(DOC, SHARED, mode="manual")
        first = use(b)
        assert all(misses >= 1 for _, misses in first.values()), first
        again = use(b)
        a.ingest_document("more.units", more, mode="manual")
        after_a = use(b)
        assert {n: m for n, (_, m) in after_a.items()} == {n: m for n, (_, m) in again.items()}  # no new miss
        assert all(after_a[n][0] > again[n][0] for n in after_a), (again, after_a)  # every cache hit again
        b.ingest_document("more.units", more, mode="manual")
        after_b = use(b)
        assert after_b["key_nodes"][1] > after_a["key_nodes"][1] and after_b["expand"][1] > after_a["expand"][1]


def test_kg_workspaces_lists_renames_and_deletes(tmp_path: Path):
    """``kg workspaces``: a rename keeps the workspace's knowledge under the new name; a delete
    needs --yes, is refused while a server owns the workspace (exit 1, nothing removed), and
    then leaves a name nobody can read; ``default`` is never renamed or deleted."""
    from tests.processes import env_for, kg, serving

    src = tmp_path / "b.units"
    src.write_text(SHARED + ONLY_B, "utf-8")
    env = env_for(tmp_path / "kg")
    assert kg(env, "--workspace", "team-b", "ingest", str(src)).returncode == 0
    assert kg(env, "workspaces", "create", "team-a").returncode == 0
    assert json.loads(kg(env, "workspaces", "list", "--json").stdout) == ["default", "team-a", "team-b"]
    assert kg(env, "workspaces", "create", "team-a").returncode == 2  # never emptied by a second create
    assert kg(env, "workspaces", "rename", "team-b", "team-a").returncode == 2  # the new name is taken
    assert kg(env, "workspaces", "rename", "team-b", "blue").returncode == 0
    moved = kg(env, "--workspace", "blue", "show", "w2")
    assert moved.returncode == 0 and MARKER in moved.stdout, moved.stderr
    assert kg(env, "--workspace", "team-b", "show", "w2").returncode == 2
    assert kg(env, "workspaces", "delete", "blue").returncode == 2  # no --yes
    with serving({**env, "KG_WORKSPACE": "blue"}):
        owned = kg(env, "workspaces", "delete", "blue", "--yes")
        assert owned.returncode == 1 and "served by" in owned.stderr, owned.stderr
    assert kg(env, "--workspace", "blue", "show", "w2").returncode == 0
    assert kg(env, "workspaces", "delete", "blue", "--yes").returncode == 0
    assert kg(env, "--workspace", "blue", "show", "w2").returncode == 2
    assert kg(env, "workspaces", "delete", "default", "--yes").returncode == 2
    assert json.loads(kg(env, "workspaces", "list", "--json").stdout) == ["default", "team-a"]


def test_kg_workspaces_on_neo4j(tmp_path: Path, request):
    """``kg workspaces`` on Neo4j, where a workspace is the ``ws`` of its nodes: create marks one,
    rename rewrites every node's ``ws`` (B's unit is then found under the new name only), delete
    removes the workspace's nodes and nothing of another's, and both are refused (exit 1) while
    a ``kg serve`` serves the workspace."""
    from tests.processes import kg, neo4j_env, serving

    settings = _settings("neo4j", tmp_path / "kg", "default", request)
    src = tmp_path / "b.units"
    src.write_text(SHARED + ONLY_B, "utf-8")
    env = neo4j_env(tmp_path / "kg")
    assert kg(env, "--workspace", "team-b", "ingest", str(src)).returncode == 0
    assert kg(env, "ingest", str(src)).returncode == 0  # the same units in default
    assert kg(env, "workspaces", "create", "team-a").returncode == 0
    listed = kg(env, "workspaces", "list", "--json")
    assert json.loads(listed.stdout) == ["default", "team-a", "team-b"], listed.stderr
    assert kg(env, "workspaces", "create", "team-a").returncode == 2
    assert kg(env, "workspaces", "rename", "team-b", "team-a").returncode == 2  # the new name is taken
    store = request.getfixturevalue("neo4j_connection")

    def beating(server_env: dict[str, str]) -> None:
        """Once the server's first heartbeat is stored (it is written beside the port opening)."""
        import time

        deadline = time.monotonic() + 120  # only bounds a hang
        while not store.workspace_served("team-b"):
            assert time.monotonic() < deadline, "the server's heartbeat never came"
            time.sleep(0.2)

    # a server of team-b alone, then one serving every workspace: each owns team-b
    for server_env in ({**env, "KG_WORKSPACE": "team-b"}, env):
        with serving(server_env):
            beating(server_env)
            owned = kg(env, "workspaces", "rename", "team-b", "blue")
            assert owned.returncode == 1 and "served by" in owned.stderr, owned.stderr
    assert kg(env, "workspaces", "rename", "team-b", "blue").returncode == 0
    moved = kg(env, "--workspace", "blue", "show", "w2")
    assert moved.returncode == 0 and MARKER in moved.stdout, moved.stderr
    gone = kg(env, "--workspace", "team-b", "show", "w2")
    assert gone.returncode != 0 and MARKER not in gone.stdout
    assert kg(env, "workspaces", "delete", "blue").returncode == 2  # no --yes
    assert kg(env, "workspaces", "delete", "blue", "--yes").returncode == 0
    assert json.loads(kg(env, "workspaces", "list", "--json").stdout) == ["default", "team-a"]
    import neo4j

    with neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password)) as d:
        rows = d.execute_query("MATCH (n) WHERE n.ws IN ['blue', 'team-b'] RETURN count(n) AS n").records
    assert rows[0]["n"] == 0
    in_default = kg(env, "show", "w2")  # default's own copy is whole
    assert in_default.returncode == 0 and MARKER in in_default.stdout, in_default.stderr
    assert kg(env, "workspaces", "delete", "default", "--yes").returncode == 2


def test_dump_and_restore_one_workspace(tmp_path: Path):
    """``kg --workspace B dump`` holds B's units only, and restoring it into a new workspace C
    gives C exactly those, leaving A and ``default`` as they were."""
    def kb(ws: str) -> KnowledgeBase:
        return KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="edge", workspace=ws))

    with kb("team-a") as a, kb("team-b") as b:
        a.ingest_document("a.units", "#a1 {tea} [contains] {caffeine}\n", mode="manual")
        b.ingest_document(DOC, SHARED + ONLY_B, mode="manual")
        b.dump(tmp_path / "b.dump")
    with kb("team-c") as c:
        c.restore(tmp_path / "b.dump")
        assert sorted(u.id for u in c.store.iter_units()) == ["w1", "w2", "w3"]
        assert c.resolve_node("tea") is None and c.resolve_node(MARKER) is not None
    with kb("team-a") as a, kb("default") as d:
        assert a.stats()["units"] == 1 and a.resolve_node(MARKER) is None
        assert d.stats()["units"] == 0
