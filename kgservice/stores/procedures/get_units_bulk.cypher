// get_units_bulk: get_units for many ids, as one record holding a list of [id, json] pairs: the
// driver's per-record cost (a message, a Record, callbacks) was most of a 1k-unit read's time,
// which a server pays on the ask path when another process's ingest moves its indexes.
// parameters: $ids (list of unit ids)
// returns: rows (list of [id, json])
CYPHER replan=skip
MATCH (u:Unit {ws: $ws})
WHERE u.id IN $ids
RETURN collect([u.id, u.json]) AS rows
