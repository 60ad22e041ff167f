// aliases_get: which of the given ids are duplicates merged away at ingest, and the unit each
// was merged into (kgservice/stores/validate.py resolves references to them).
// parameters: $ids (list of unit ids)
// returns: id, unit
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
MATCH (a:UnitAlias)
WHERE a.id IN $ids
RETURN a.id AS id, a.unit AS unit
