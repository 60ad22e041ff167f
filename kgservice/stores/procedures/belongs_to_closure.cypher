// belongs_to_closure: transitive belongs-to ancestors with their shortest depth, and the
// units stated on each ancestor (assertion sinking: facts on a super-class hold for the node).
// Bounded at 10 hops (MAX_CLOSURE_DEPTH); ANY SHORTEST walks breadth-first, no path explosion.
// parameters: $id (node id)
// returns: ancestor (node id), depth (int), units (ids of units whose subject is the ancestor)
MATCH (n:Node {ws: $ws, id: $id})
MATCH p = ANY SHORTEST (n)(()-[r:BELONGS_TO WHERE r.live]->()){1,10}(a:Node {ws: $ws})
WHERE a <> n
WITH a, min(length(p)) AS depth
OPTIONAL MATCH (a)<-[:SUBJECT]-(u:Unit {ws: $ws})
WITH a, depth, u ORDER BY u.id
RETURN a.id AS ancestor, depth, collect(u.id) AS units
ORDER BY depth, ancestor
