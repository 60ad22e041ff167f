// life_stated_by: the documents stating each unit (live or archived), over the FROM edges.
// parameters: $ids (unit ids)
// returns: unit, docs (document ids, sorted); units no document states are left out
UNWIND $ids AS id
CALL (id) {
  MATCH (:Unit {ws: $ws, id: id})-[:FROM]->(d:Document {ws: $ws})
  RETURN d.id AS doc
  UNION
  MATCH (:RetractedUnit {ws: $ws, id: id})-[:FROM]->(d:Document {ws: $ws})
  RETURN d.id AS doc
}
WITH id, doc ORDER BY doc
RETURN id AS unit, collect(DISTINCT doc) AS docs
