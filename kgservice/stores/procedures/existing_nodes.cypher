// existing_nodes: which of the given node ids are already stored.
// parameters: $ids (list of node ids)
// returns: one row: ids (the stored ones; one list rather than a row per node, since a
//          batch asks about tens of thousands), eids (their element ids, same order: the
//          ingest transaction links to them without another index seek), kinds (same order)
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
MATCH (n:Node {ws: $ws})
WHERE n.id IN $ids
RETURN collect(n.id) AS ids, collect(elementId(n)) AS eids, collect(n.kind) AS kinds
