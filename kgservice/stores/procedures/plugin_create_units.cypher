// plugin_create_units: ingest_units through kgservice's plugin (kg.createUnits writes the same
// units, properties and SUBJECT / ARG {pos} / MOD {slot} edges through the kernel API, in this
// transaction). Used when the server has the plugin (kgservice/stores/neo4j/writes.py).
// parameters: $units (rows as for ingest_units; subject and node are element ids), $ws (the workspace)
// returns: created (units written)
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
CALL kg.createUnits($units, $ws) YIELD created
RETURN created
