// mention_counts: how many distinct units mention each node (subject, argument or modifier
// value), counted in the server: the entry step's specificity needs the number only, and a
// hub's list of unit ids is tens of thousands long.
// parameters: $ids (list of node ids)
// returns: one row: nodes (the stored ones among $ids), counts (for each, its unit count)
UNWIND $ids AS id
MATCH (n:Node {ws: $ws, id: id})
RETURN collect(n.id) AS nodes,
       collect(COUNT { MATCH (n)<-[:SUBJECT|ARG|MOD]-(u:Unit {ws: $ws}) RETURN DISTINCT u }) AS counts
