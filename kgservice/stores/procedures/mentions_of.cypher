// mentions_of: the units that mention each node at all (as subject, argument or modifier
// value: subject_mentions and context_mentions together), for the readers that want every unit
// about a node (retrieval, drill-down, neighbours), several nodes in one round trip.
// parameters: $ids (list of node ids)
// returns: one row: nodes (the stored ones among $ids), units (for each, its list of distinct
//          unit ids, ordered; a list, not a row per unit: a hub concept is mentioned by tens of
//          thousands of units)
UNWIND $ids AS id
MATCH (n:Node {ws: $ws, id: id})
CALL (n) {
  MATCH (n)<-[:SUBJECT|ARG|MOD]-(u:Unit {ws: $ws})
  WITH DISTINCT u.id AS unit ORDER BY unit
  RETURN collect(unit) AS units
}
RETURN collect(n.id) AS nodes, collect(units) AS units
