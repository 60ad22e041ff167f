// live_fact_units: the stored units that no unit supersedes and that could state the same fact
// as a unit being ingested (ingest's duplicate check, kgservice/stores/validate.py prepare_batch):
// same subject node and same node at argument 0, as fact_key requires of a duplicate. The
// client compares the full fact keys of what comes back.
// parameters: $probes (list of distinct probe strings: subject id, U+001F, argument-0 id, as
//             kgservice/stores/neo4j/writes.py:unit_probe builds them and ingest stores them)
// returns: id, json (one row per unit)
// One index seek per probe on Unit(probe) (schema.cypher: unit_probe). Walking the smaller
// side of each pair instead (the subject's SUBJECT edges or the argument's ARG edges) grows
// with the store; a probe seek does not.
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
UNWIND $probes AS p
MATCH (u:Unit {ws: $ws, probe: p})
WHERE NOT (u)-[:SUPERSEDED_BY]->()
RETURN DISTINCT u.id AS id, u.json AS json
