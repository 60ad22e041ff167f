// aliases_get: which of the given ids are duplicates merged away at ingest, the unit each
// was merged into, and whether that unit is live: an alias of a retracted unit is archived with
// it (not in force: kgservice/stores/validate.py resolves references only to aliases in force).
// parameters: $ids (list of unit ids)
// returns: id, unit, live
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
MATCH (a:UnitAlias {ws: $ws})
WHERE a.id IN $ids
RETURN a.id AS id, a.unit AS unit, EXISTS { MATCH (:Unit {ws: $ws, id: a.unit}) } AS live
