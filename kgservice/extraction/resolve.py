"""Entity resolution of extracted labels against the graph, chunk by chunk (DESIGN §3).

For each concept label in a chunk's extraction, in this order:

1. **exact id** — ``node_id(label)`` is already a node (or was introduced by an earlier
   chunk of the same document): keep it; it *is* that node.
2. **≡ index** — the label takes part in a synonym unit (in this extraction, or its id is in
   a stored ≡ class): it is explicitly linked, so it is kept and the ≡ index
   (``store.synonym_class``) merges it at query time; no vector guess overrides a stated synonym.
3. **candidates** — labels of the graph (and of earlier chunks) related to it as names
   (:mod:`kgservice.extraction.names`: a qualifier, an acronym, a name inside a longer name,
   a close spelling: "Seattle" / "Seattle, Washington"), plus its vector near-duplicates
   (Qdrant, cosine at or above ``ask``). Each is judged by its name structure first: a label
   that differs only in case, accents, punctuation or plural is rewritten to the existing
   one; a pair obviously different as names ("zip" / "gunzip") is never asked, however close
   the vectors; the best remaining candidate is asked once (purpose ``merge_confirm``),
   and the answer is remembered for every later ingest (:mod:`kgservice.extraction.decisions`).

Rewriting happens before content ids are computed, so the stored unit is the merged one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgservice.errors import InvalidArgument
from kgservice.extraction.decisions import LEGACY_FILE, MergeDecisions
from kgservice.extraction.names import SAME_FORM, relation, structural_candidates
from kgservice.extraction.schema import Extraction, SameConcept
from kgservice.ids import node_id
from kgservice.llm import LLM, load_prompt

if TYPE_CHECKING:
    from kgservice.parts import Parts
    from kgservice.entry.match import LabelIndex
    from kgservice.families import Lexicon
    from kgservice.stores.base import GraphStore
    from kgservice.vectors import Embedder, VectorStore

DEFAULT_AUTO = 0.97
DEFAULT_ASK = 0.85


@dataclass
class Resolution:
    label: str
    node: str  # the node id the label resolves to
    how: str  # exact | synonym | name | vector | name+llm | vector+llm | remembered | new
    candidate: str | None = None
    cosine: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _digits(s: str) -> list[str]:
    return re.findall(r"\d+", s)


PROMPT_FILE = "same_concept_v2.md"


class Resolver:
    """One per document: remembers the labels earlier chunks introduced."""

    def __init__(self, store: GraphStore, lexicon: Lexicon, embed: Embedder, vectors: VectorStore, llm: LLM, *,
                 auto: float = DEFAULT_AUTO, ask: float = DEFAULT_ASK, top_k: int = 3,
                 labels: Callable[[], LabelIndex] | None = None, decisions: MergeDecisions | None = None):
        """``labels`` gives the graph's label index (the entry step's, read once per document);
        ``decisions`` remembers what the model said about a pair (in memory when not given)."""
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
        self._labels = labels
        self._index: LabelIndex | None = None
        self.decisions = decisions if decisions is not None else MergeDecisions(None)
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
            if res.how not in ("new", "exact", "synonym") and res.candidate is not None:
                rename[lbl] = res.candidate
        return rename

    @classmethod
    def for_kb(cls, parts: Parts, llm: LLM) -> "Resolver":
        """The resolver of a knowledge base's parts (:class:`kgservice.parts.Parts`): its store
        (which keeps the decisions), vectors and label index."""
        legacy = Path(parts.settings.kb_dir) / LEGACY_FILE if parts.settings.kb_dir is not None else None
        return cls(parts.store, parts.lexicon, parts.embedder, parts.vectors, llm,
                   labels=lambda: parts.entry_finder.index(), decisions=MergeDecisions(parts.store, legacy))

    # -- step 3 ------------------------------------------------------------------------------
    def _structural(self, label: str) -> list[str]:
        """Graph node ids related to the label as names (:func:`structural_candidates`)."""
        if self._labels is None:
            return []
        if self._index is None:
            self._index = self._labels()
        ix = self._index
        return structural_candidates(label, ix.keys, ix.bare, ix.postings)

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
            cosine: dict[str, float] = {}
            for hid, cos in stored[i]:
                cosine[hid] = max(cosine.get(hid, 0.0), float(cos))
            for pid, pvec in self._pending_vecs.items():
                cos = float(np.dot(vecs[i], pvec))
                if cos >= self.ask:
                    cosine[pid] = max(cosine.get(pid, 0.0), cos)
            ids = [h for h in list(cosine) + self._structural(lbl) if h != nid]
            labels_of = {n.id: n.label for n in self.store.get_nodes(ids)}
            labels_of.update({p: self.pending[p] for p in self.pending if p != nid and relation(lbl, self.pending[p])})
            cands = []  # (same form first, vector-only last, best cosine first, id)
            for cid, clabel in labels_of.items():
                rel = relation(lbl, clabel)
                if rel is None or (rel == "other script" and cid not in cosine):
                    continue  # obviously different names (a translation only the vectors can propose)
                cands.append((rel != SAME_FORM, rel == "other script", -cosine.get(cid, 0.0), cid, clabel, rel))
            cands.sort()
            res = Resolution(lbl, nid, "new")
            if cands:
                *_, cid, clabel, rel = cands[0]
                res.candidate = clabel
                res.cosine = round(cosine[cid], 4) if cid in cosine else None
                if rel == SAME_FORM or (cosine.get(cid, 0.0) >= self.auto and _digits(lbl) == _digits(clabel)):
                    res.node, res.how = cid, "name" if rel == SAME_FORM else "vector"
                else:
                    same, asked = self._confirm(lbl, clabel, cid, rel)
                    if same:
                        res.node = cid
                        res.how = "remembered" if not asked else "vector+llm" if cid in cosine else "name+llm"
            if res.how == "new":
                self.pending[nid] = lbl
                self._pending_vecs[nid] = vecs[i]
            out.append(res)
        return out

    def _confirm(self, new: str, existing: str, existing_id: str, rel: str) -> tuple[bool, bool]:
        """(same?, asked the model now?): a pair decided before is not asked again."""
        from kgservice.notation.serializer import format_unit

        known = self.decisions.get(new, existing)
        if known is not None:
            return known, False
        units = self.store.get_units(self.store.subject_mentions(existing_id)[:3])
        payload = {"task": "same_concept", "new": new, "existing": existing, "relation": rel,
                   "existing_facts": [format_unit(u, with_id=False, escape=False).splitlines()[0] for u in units]}
        messages = [
            {"role": "system", "content": load_prompt("kgservice.extraction", PROMPT_FILE).render()},
            {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
        ]
        out = self.llm.complete_json(messages, SameConcept, "merge_confirm")
        self.decisions.put(new, existing, out.same, out.reason, self.llm.model)
        return out.same, True

    def summary(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.log:
            out[r.how] = out.get(r.how, 0) + 1
        return out
