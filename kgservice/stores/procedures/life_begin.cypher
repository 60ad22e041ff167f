// life_begin: the first statement of a lifecycle change's one write transaction
// (kgservice/stores/neo4j/lifecycle.py). Takes the write lock on (:KgMeta {id: 'lifecycle'}),
// which serialises lifecycle changes (held until the transaction ends), and returns the
// current version of each document the change sets, so a change prepared against an older
// version is refused instead of mixed with the one that came first.
// parameters: $docs (list of document ids)
// returns: one row: versions (list of {id, version, sha256}; version null for an absent document),
//          seq (the seq of the last change, 0 before the first), ord (its append position)
MERGE (m:KgMeta {ws: $ws, id: 'lifecycle'})
SET m._lock = true
REMOVE m._lock
WITH m
CALL () {
  UNWIND $docs AS id
  OPTIONAL MATCH (d:Document {ws: $ws, id: id})
  RETURN collect({id: id, version: d.version, sha256: d.sha256}) AS versions
}
CALL () {
  MATCH (c:Change {ws: $ws}) WHERE c.ord IS NOT NULL
  RETURN c.seq AS seq, c.ord AS ord ORDER BY c.ord DESC LIMIT 1
  UNION ALL
  RETURN 0 AS seq, 0 AS ord
}
WITH versions, seq, ord ORDER BY ord DESC LIMIT 1
RETURN versions, seq, ord
