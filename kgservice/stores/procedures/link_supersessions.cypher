// link_supersessions: old -[:SUPERSEDED_BY]-> new between units, after the batch's units exist.
// The old unit's edges were retired before (retire_superseded) or, when it is in the same
// batch, created with live = false.
// CREATE, not MERGE: every new unit is created in this transaction, so no such edge exists
// yet, and the rows are distinct (the client dedupes); a retried transaction starts over.
// parameters: $pairs (list of distinct {old, new})
// returns: linked (edges created)
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
UNWIND $pairs AS p
MATCH (o:Unit {ws: $ws, id: p.old}), (n:Unit {ws: $ws, id: p.new})
CREATE (o)-[:SUPERSEDED_BY]->(n)
RETURN count(*) AS linked
