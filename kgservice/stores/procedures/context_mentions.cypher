// context_mentions: units where the node is an argument or a modifier value.
// parameters: $id (node id)
// returns: one row: units (list of distinct unit ids, ordered); one list, not a row per
//          unit, because a hub concept is an argument of tens of thousands of units
MATCH (:Node {ws: $ws, id: $id})<-[:ARG|MOD]-(u:Unit {ws: $ws})
WITH DISTINCT u.id AS unit ORDER BY unit
RETURN collect(unit) AS units
