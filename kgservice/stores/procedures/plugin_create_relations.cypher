// plugin_create_relations: ingest_relations through kgservice's plugin (kg.createRelations writes
// the same typed edges and properties through the kernel API, in this transaction). Used when
// the server has the plugin (kgservice/stores/neo4j/writes.py).
// parameters: $rels (rows as for ingest_relations; src and dst are element ids)
// returns: created (rows processed)
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
CALL kg.createRelations($rels) YIELD created
RETURN created
