// mentions_of: mentions.cypher for several nodes in one round trip (retrieval and drill-down
// read the units of their 30-40 best nodes per question).
// parameters: $ids (list of node ids)
// returns: one row: nodes (the stored ones among $ids), units (for each, its list of distinct
//          unit ids, ordered)
UNWIND $ids AS id
MATCH (n:Node {id: id})
CALL (n) {
  MATCH (n)<-[:SUBJECT|ARG|MOD]-(u:Unit)
  WITH DISTINCT u.id AS unit ORDER BY unit
  RETURN collect(unit) AS units
}
RETURN collect(n.id) AS nodes, collect(units) AS units
