// ingest_nodes: merge the nodes of a batch; a node seen as derived stays derived.
// parameters: $nodes (list of {id, label, kind})
// returns: created (how many nodes were new)
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
UNWIND $nodes AS n
MERGE (x:Node {ws: $ws, id: n.id})
  ON CREATE SET x.label = n.label, x.kind = n.kind, x._new = true
FOREACH (_ IN CASE WHEN n.kind = 'derived' AND x.kind <> 'derived' THEN [1] ELSE [] END | SET x.kind = 'derived')
WITH x, coalesce(x._new, false) AS created
REMOVE x._new
RETURN count(CASE WHEN created THEN 1 END) AS created
