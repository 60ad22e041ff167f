"""The knowledge lifecycle: documents as records in the graph store, re-ingest that replaces a
document's facts, forget / retract with a history of changes and undo (docs/DESIGN.md §1).

A unit is *live* while it is in the graph; a retracted unit leaves every index (so no read path
can see it: search, expansion, answers, export, MCP, the Browser procedures) but is kept in the
store's archive with the change that retracted it, until ``purge``. Each document records which
units it states (and from which lines); a unit stated by several documents stays live until the
last of them stops stating it. Every change is one atomic store write that also logs the touched
nodes in the change log, so every server drops exactly the caches about them.
"""

from kgservice.lifecycle.model import (  # noqa: F401
    ChangeRecord,
    ChangeResult,
    DocumentInfo,
    DocumentRecord,
    Provenance,
    PurgeReport,
    RetractedUnit,
    SyncReport,
)
