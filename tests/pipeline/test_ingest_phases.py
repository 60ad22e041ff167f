"""`kg ingest`'s progress: after the graph batch, a phase of its own for the vectors, so the
bar does not sit at 100 % while they are written."""

from __future__ import annotations

from kgservice.config import Settings
from kgservice.service import KnowledgeBase


def _events(tmp_path, embed: bool) -> list[tuple[str, dict]]:
    (tmp_path / "p.units").write_text("#p1 {tea} [contains] {caffeine}\n#p2 {coffee} [contains] {caffeine}\n", "utf-8")
    seen: list[tuple[str, dict]] = []
    with KnowledgeBase(Settings(data_dir=tmp_path / f"kg-{embed}", embedder="hash:64")) as kb:
        kb.ingest_paths([tmp_path / "p.units"], embed=embed, progress=lambda e, i: seen.append((e, i)))
    return seen


def test_vectors_are_a_phase_after_the_graph_batch(tmp_path):
    seen = _events(tmp_path, embed=True)
    names = [e for e, _ in seen]
    assert names[0] == "units-start" and names[-1] == "units-done"
    assert names.index("units-vectors") > max(i for i, n in enumerate(names) if n == "units")
    assert dict(seen)["units-vectors"] == {"nodes": 3}  # tea, coffee, caffeine


def test_no_vector_phase_without_embedding(tmp_path):
    assert "units-vectors" not in [e for e, _ in _events(tmp_path, embed=False)]
