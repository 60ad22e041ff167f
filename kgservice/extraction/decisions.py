"""Entity-resolution decisions remembered: a pair of labels the model judged once (same
concept or not) is never asked again, in this ingest or any later one, by this server or any
other of the same store (a real run asked "zip" / "gunzip" again when the document was
re-ingested).

Kept in the graph store (:meth:`kgservice.stores.base.GraphStore.record_merge_decision`: a
``:KgMergeDecision`` node in Neo4j, ``shared.sqlite3`` beside the embedded graph), apart from
the query caches (``kg cache clear`` must not forget them), carried by ``kg dump`` /
``kg restore``. A pair is keyed by the new label's form
(:func:`kgservice.extraction.names.form_key`) and the existing node's id, in order, so
"Seattle" asked against "Seattle, Washington" is also known the other way round.

Decisions an earlier version kept in ``resolution.sqlite3`` in the data directory are moved
into the store the first time the knowledge base resolves entities (the file is then renamed
``resolution.sqlite3.imported``).
"""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from kgservice.extraction.names import form_key
from kgservice.ids import node_id
from kgservice.stores.shared import MergeDecision

if TYPE_CHECKING:
    from kgservice.stores.base import GraphStore

LEGACY_FILE = "resolution.sqlite3"


class MergeDecisions:
    """The decisions of one store; ``store`` None keeps them in memory (tests, a resolver
    with no store of its own).

    >>> d = MergeDecisions(None)
    >>> d.get("Seattle", "Seattle, Washington") is None
    True
    >>> d.put("Seattle", "Seattle, Washington", True, "the city", "m")
    >>> d.get("seattle", "Seattle, Washington"), d.get("Seattle, Washington", "Seattle")
    (True, True)
    """

    def __init__(self, store: GraphStore | None, legacy: Path | None = None):
        self.store = store
        self._memory: dict[tuple[str, str], MergeDecision] = {}
        self._legacy = legacy
        self._lock = threading.Lock()

    @staticmethod
    def pair(new: str, existing: str) -> tuple[str, str]:
        """The pair's keys, in order: either label may be the new one."""
        a, b = form_key(new), form_key(existing) or node_id(existing)
        return (a, b) if a <= b else (b, a)

    def get(self, new: str, existing: str) -> bool | None:
        self._import_legacy()
        a, b = self.pair(new, existing)
        found = self._memory.get((a, b)) if self.store is None else self.store.merge_decision(a, b)
        return None if found is None else found.same

    def put(self, new: str, existing: str, same: bool, reason: str, model: str) -> None:
        a, b = self.pair(new, existing)
        d = MergeDecision(a=a, b=b, same=same, reason=reason[:200], model=model, decided=_now())
        if self.store is None:
            self._memory[(a, b)] = d
        else:
            self.store.record_merge_decision(d)

    def _import_legacy(self) -> None:
        """Move the decisions of an older data directory's ``resolution.sqlite3`` into the
        store, once (the store's own decision for a pair wins), and rename the file."""
        with self._lock:
            path, self._legacy = self._legacy, None
        if path is None or self.store is None or not path.is_file():
            return
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT a, b, same, reason, model, decided FROM decisions").fetchall()
        except sqlite3.Error:
            return  # not a decisions file: left as it is
        finally:
            db.close()
        for a, b, same, reason, model, decided in rows:
            if self.store.merge_decision(a, b) is None:
                at = datetime.fromtimestamp(float(decided), timezone.utc).isoformat(timespec="seconds")
                self.store.record_merge_decision(MergeDecision(a=a, b=b, same=bool(same), reason=reason or "",
                                                               model=model or "", decided=at))
        path.rename(path.with_name(path.name + ".imported"))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
