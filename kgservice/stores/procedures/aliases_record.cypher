// aliases_record: remember duplicates merged away at ingest, as (:UnitAlias {id, unit}) with
// `unit` the id of the unit each was merged into. Run inside the transaction that stores the
// batch that merged them (or by itself when the batch added nothing), so they are never
// half-written. An alias keeps the unit it was first merged into.
// parameters: $aliases (list of {id, unit})
// returns: rows (aliases written or already present)
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
UNWIND $aliases AS row
MERGE (a:UnitAlias {ws: $ws, id: row.id})
ON CREATE SET a.unit = row.unit
RETURN count(a) AS rows
