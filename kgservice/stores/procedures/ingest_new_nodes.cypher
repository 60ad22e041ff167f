// ingest_new_nodes: create the nodes of a batch that existing_nodes did not find, in the
// batch's write transaction.
// parameters: $nodes (list of {id, label, kind})
// returns: one row: ids, eids (element ids of the created nodes, same order)
// CREATE, not MERGE: the transaction read them as absent just before, and a concurrent writer
// that creates one of them first makes this commit fail on the node_id constraint, which
// the ingest retries (re-reading them as present). MERGE would pay a locking index seek per
// node; the element ids let the unit and relation statements link without index seeks.
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
UNWIND $nodes AS n
CREATE (x:Node {ws: $ws, id: n.id, label: n.label, kind: n.kind})
RETURN collect(n.id) AS ids, collect(elementId(x)) AS eids
