// get_nodes_bulk: get_nodes for many ids, as one record holding a list of [id, label, kind]
// (see get_units_bulk: one record instead of one per node).
// parameters: $ids (list of node ids)
// returns: rows (list of [id, label, kind])
MATCH (n:Node {ws: $ws})
WHERE n.id IN $ids
RETURN collect([n.id, n.label, n.kind]) AS rows
