// subject_mentions: units whose subject is the node.
// parameters: $id (node id)
// returns: one row: units (list of unit ids, ordered); one list, not a row per unit,
//          because a hub concept is the subject of tens of thousands of units
MATCH (:Node {ws: $ws, id: $id})<-[:SUBJECT]-(u:Unit {ws: $ws})
WITH u.id AS unit ORDER BY unit
RETURN collect(unit) AS units
