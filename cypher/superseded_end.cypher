// superseded_end: for each unit, the terminal (not superseded) units of its SUPERSEDED_BY chain.
// Bounded at 10 hops (MAX_CLOSURE_DEPTH).
// parameters: $ids (list of unit ids)
// returns: unit, ends (ordered list of terminal unit ids; [unit] when it is live)
UNWIND $ids AS id
MATCH (u:Unit {id: id})
OPTIONAL MATCH (u)(()-[:SUPERSEDED_BY]->()){1,10}(t:Unit)
WHERE NOT (t)-[:SUPERSEDED_BY]->()
WITH u, t ORDER BY t.id
WITH u, collect(DISTINCT t.id) AS ends
RETURN u.id AS unit, CASE WHEN size(ends) = 0 THEN [u.id] ELSE ends END AS ends
