// get_nodes: the given nodes.
// parameters: $ids (list of node ids)
// returns: id, label, kind
MATCH (n:Node {ws: $ws})
WHERE n.id IN $ids
RETURN n.id AS id, n.label AS label, n.kind AS kind
