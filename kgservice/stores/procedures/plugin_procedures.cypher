// plugin_procedures: which kg.* procedures of kgservice's plugin (neo4j-plugin/) the server
// has loaded; the client uses the resident spreading activation only when it is there.
// parameters: none
// returns: name (procedure name), ordered
SHOW PROCEDURES YIELD name
WHERE name STARTS WITH 'kg.'
RETURN name
ORDER BY name
