// existing_nodes: which of the given node ids are already stored.
// parameters: $ids (list of node ids)
// returns: id
MATCH (n:Node)
WHERE n.id IN $ids
RETURN n.id AS id
