// plugin_create_nodes: ingest_new_nodes through kgservice's plugin (kg.createNodes writes the same
// nodes through the kernel API, in this transaction): the batch's nodes that existing_nodes did
// not find. Used when the server has the plugin (kgservice/stores/neo4j/writes.py).
// parameters: $nodes (list of {id, label, kind}), $ws (the workspace every created node carries)
// returns: one row: ids, eids (element ids of the created nodes, same order)
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
CALL kg.createNodes($nodes, $ws) YIELD ids, eids
RETURN ids, eids
