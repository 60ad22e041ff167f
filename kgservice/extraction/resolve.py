"""Entity resolution of extracted labels against the graph, chunk by chunk (DESIGN §3).

For each concept label in a chunk's extraction, in this order:

1. **exact id** — ``node_id(label)`` is already a node (or was introduced by an earlier
   chunk of the same document): keep it; it *is* that node.
2. **≡ index** — the label takes part in a synonym unit (in this extraction, or its id is in
   a stored ≡ class): it is explicitly linked, so it is kept and the ≡ index
   (``store.synonym_class``) merges it at query time; no vector guess overrides a stated synonym.
3. **vector near-duplicate** — the label is embedded and compared with the stored node
   vectors (Qdrant) and with the new labels of earlier chunks. At or above ``auto`` cosine
   (and with the same digits, so "Python 3.12" never becomes "Python 3.13" silently) it is
   rewritten to the existing label; between ``ask`` and ``auto`` — the ambiguous band — the
   LLM is asked (purpose ``merge_confirm``); below ``ask`` it is a new node.

Rewriting happens before content ids are computed, so the stored unit is the merged one.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from kgservice.errors import InvalidArgument
from kgservice.extraction.schema import Extraction, SameConcept
from kgservice.ids import node_id
from kgservice.llm import LLM, load_prompt

if TYPE_CHECKING:
    from kgservice.families import Lexicon
    from kgservice.stores.base import GraphStore
    from kgservice.vectors import Embedder, VectorStore

DEFAULT_AUTO = 0.97
DEFAULT_ASK = 0.85


@dataclass
class Resolution:
    label: str
    node: str  # the node id the label resolves to
    how: str  # exact | synonym | vector | vector+llm | new
    candidate: str | None = None
    cosine: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _digits(s: str) -> list[str]:
    return re.findall(r"\d+", s)


class Resolver:
    """One per document: remembers the labels earlier chunks introduced."""

    def __init__(self, store: GraphStore, lexicon: Lexicon, embed: Embedder, vectors: VectorStore, llm: LLM, *, auto: float = DEFAULT_AUTO, ask: float = DEFAULT_ASK, top_k: int = 3):
        if not 0 < ask <= auto <= 1:
            raise InvalidArgument(f"need 0 < ask <= auto <= 1, got ask={ask}, auto={auto}")
        self.store = store
        self.lexicon = lexicon
        self.embed = embed
        self.vectors = vectors
        self.llm = llm
        self.auto = auto
        self.ask = ask
        self.top_k = top_k
        self.pending: dict[str, str] = {}  # node id -> label, new in this document
        self._pending_vecs: dict[str, Any] = {}
        self._memo: dict[str, Resolution] = {}  # vector decisions, reused by later chunks
        self.log: list[Resolution] = []

    def resolve(self, ex: Extraction) -> dict[str, str]:
        """Return label -> label to write (only for labels that change)."""
        store = self.store
        labels = ex.node_labels()
        existing = {n.id: n.label for n in store.get_nodes([node_id(lbl) for lbl in labels])}
        declared = {node_id(lbl) for u in ex.units if self.lexicon.resolve(u.predicate).kind == "synonym"
                    for lbl in u.node_labels()}
        rename: dict[str, str] = {}
        unresolved: list[str] = []
        for lbl in labels:
            nid = node_id(lbl)
            if nid in existing or nid in self.pending:
                self.log.append(Resolution(lbl, nid, "exact"))
            elif nid in declared or len(store.synonym_class(nid)) > 1:
                self.log.append(Resolution(lbl, nid, "synonym"))
                self.pending[nid] = lbl
            else:
                unresolved.append(lbl)
        fresh = [lbl for lbl in unresolved if node_id(lbl) not in self._memo]
        if fresh:
            for res in self._by_vector(fresh):
                self._memo[node_id(res.label)] = res
        for lbl in unresolved:
            res = self._memo[node_id(lbl)]
            self.log.append(Resolution(lbl, res.node, res.how, res.candidate, res.cosine))
            if res.how in ("vector", "vector+llm") and res.candidate is not None:
                rename[lbl] = res.candidate
        return rename

    # -- step 3 ------------------------------------------------------------------------------
    def _by_vector(self, labels: list[str]) -> list[Resolution]:
        import numpy as np

        vecs = self.embed.embed(labels)
        stored: list[list[tuple[str, float]]] = [[] for _ in labels]
        try:
            if self.vectors.count() > 0:
                stored = self.vectors.search_many(vecs, top_k=self.top_k, threshold=self.ask)
        except Exception as exc:  # a broken vector store must not make ingest guess: say so
            from kgservice.vectors.base import VectorStoreError

            raise VectorStoreError(f"entity resolution needs the vector store: {exc}") from exc
        out: list[Resolution] = []
        for i, lbl in enumerate(labels):
            nid = node_id(lbl)
            cands: list[tuple[float, str, str]] = []  # (cosine, node id, label)
            hit_ids = [h[0] for h in stored[i]]
            labels_of = {n.id: n.label for n in self.store.get_nodes(hit_ids)}
            for hid, cos in stored[i]:
                if hid in labels_of and hid != nid:
                    cands.append((cos, hid, labels_of[hid]))
            for pid, pvec in self._pending_vecs.items():
                cos = float(np.dot(vecs[i], pvec))
                if cos >= self.ask and pid != nid:
                    cands.append((cos, pid, self.pending[pid]))
            cands.sort(key=lambda c: (-c[0], c[1]))
            res = Resolution(lbl, nid, "new")
            if cands:
                cos, cid, clabel = cands[0]
                res.candidate, res.cosine = clabel, round(cos, 4)
                if cos >= self.auto and _digits(lbl) == _digits(clabel):
                    res.node, res.how = cid, "vector"
                elif self._confirm(lbl, clabel, cid, cos):
                    res.node, res.how = cid, "vector+llm"
            if res.how == "new":
                self.pending[nid] = lbl
                self._pending_vecs[nid] = vecs[i]
            out.append(res)
        return out

    def _confirm(self, new: str, existing: str, existing_id: str, cos: float) -> bool:
        from kgservice.notation.serializer import format_unit

        units = self.store.get_units(self.store.subject_mentions(existing_id)[:3])
        payload = {"task": "same_concept", "new": new, "existing": existing, "cosine": round(cos, 3),
                   "existing_facts": [format_unit(u, with_id=False).splitlines()[0] for u in units]}
        messages = [
            {"role": "system", "content": load_prompt("kgservice.extraction", "same_concept_v1.md").render()},
            {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
        ]
        return self.llm.complete_json(messages, SameConcept, "merge_confirm").same

    def summary(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.log:
            out[r.how] = out.get(r.how, 0) + 1
        return out
