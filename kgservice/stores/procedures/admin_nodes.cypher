// admin_nodes: every node row with its kind (kg doctor; a node id listed twice is a duplicate).
// parameters: none
// returns: id, kind
MATCH (n:Node {ws: $ws})
RETURN n.id AS id, n.kind AS kind
