// get_units: stored JSON form of the given units.
// parameters: $ids (list of unit ids)
// returns: id, json
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
MATCH (u:Unit {ws: $ws})
WHERE u.id IN $ids
RETURN u.id AS id, u.json AS json
