// node_superseded_end: terminal nodes of a node-level supersession chain
// (X replaced by Y replaced by Z -> Z), over live SUPERSEDED edges, at most 10 hops.
// parameters: $id (node id)
// returns: node (terminal node id), ordered; the node itself when nothing replaces it
MATCH (n:Node {ws: $ws, id: $id})
OPTIONAL MATCH (n)(()-[r:SUPERSEDED WHERE r.live]->()){1,10}(t:Node {ws: $ws})
WHERE NOT (t)-[:SUPERSEDED {live: true}]->()
WITH n, collect(DISTINCT t.id) AS ends
UNWIND CASE WHEN size(ends) = 0 THEN [n.id] ELSE ends END AS node
RETURN node
ORDER BY node
