// narrowed_by: derived nodes that narrow the given base node.
// parameters: $id (base node id)
// returns: node (derived node id), ordered
MATCH (:Node {ws: $ws, id: $id})-[r:NARROWED_BY]->(d:Node {ws: $ws})
WHERE r.live
RETURN DISTINCT d.id AS node
ORDER BY node
