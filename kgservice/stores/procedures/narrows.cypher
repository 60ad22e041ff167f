// narrows: base nodes the given derived node narrows.
// parameters: $id (derived node id)
// returns: node (base node id), ordered
MATCH (:Node {ws: $ws, id: $id})<-[r:NARROWED_BY]-(b:Node {ws: $ws})
WHERE r.live
RETURN DISTINCT b.id AS node
ORDER BY node
