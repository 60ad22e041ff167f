// synonym_class: the ≡ class of a node over live SYNONYM edges, either direction,
// at most 10 hops from the node (MAX_CLOSURE_DEPTH; bounds cannot be parameters).
// A pruning breadth-first var-length expand over SYNONYM only: reachability, no path
// enumeration (ANY SHORTEST to every target stalled for minutes on hub nodes).
// parameters: $id (node id)
// returns: node (member id, the node itself included), ordered
MATCH (n:Node {ws: $ws, id: $id})
OPTIONAL MATCH (n)-[:SYNONYM*1..10 {live: true}]-(m:Node {ws: $ws})
WITH n, collect(DISTINCT m.id) AS others
UNWIND others + [n.id] AS node
RETURN DISTINCT node
ORDER BY node
