// changes_record: bump the cache version and log the nodes an ingest touched. Runs INSIDE the
// ingest's write transaction (stores/neo4j/writes.py), so the graph never changes without the
// version (docs/SERVICE.md §5.6). The write lock on the one KgMeta node (taken by `SET m._lock`
// before the version is read) serialises ingest commits: seq order = commit order.
// parameters: $touched (list of node ids), $all (bool: too many to list, readers clear
//             everything), $by (the submitting user, or null), $units (the unit ids stored,
//             removed or brought back; null when not listed: readers' unit indexes rebuild)
// epoch: a fresh random id each time the KgMeta node is created (a new or wiped database), so a
// reader that remembers (epoch, version) never mistakes a rebuilt store's version N for its N.
// returns: version (the seq of the new change)
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
MERGE (m:KgMeta {ws: $ws, id: 'state'})
  ON CREATE SET m.epoch = randomUUID()
SET m._lock = true
WITH m
SET m.version = coalesce(m.version, 0) + 1
REMOVE m._lock
CREATE (:KgChange {ws: $ws, seq: m.version, touched: $touched, all: $all, by: $by, units: $units, at: datetime()})
RETURN m.version AS version
