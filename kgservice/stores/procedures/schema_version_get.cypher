// schema_version_get: the store's schema version record (kgservice/stores/schema.py), and whether the
// database holds anything besides schema markers (a fresh store gets the current version).
// parameters: none
// returns: version (null when none is recorded), compat, empty
OPTIONAL MATCH (m:KgSchema {id: 'version'})
CALL {
  MATCH (n) WHERE NOT n:KgSchema
  WITH n LIMIT 1
  RETURN count(n) = 0 AS empty
}
RETURN m.version AS version, m.compat AS compat, empty
