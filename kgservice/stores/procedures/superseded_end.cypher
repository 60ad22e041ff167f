// superseded_end: for each unit, the terminal (not superseded) units of its SUPERSEDED_BY chain.
// Not bounded: unit supersession is acyclic by construction (a new unit can only supersede
// units that already exist), and a chain longer than 10 versions must still end at the
// newest one, as on the embedded store.
// parameters: $ids (list of unit ids)
// returns: unit, ends (ordered list of terminal unit ids; [unit] when it is live)
UNWIND $ids AS id
MATCH (u:Unit {id: id})
OPTIONAL MATCH (u)(()-[:SUPERSEDED_BY]->())+(t:Unit)
WHERE NOT (t)-[:SUPERSEDED_BY]->()
WITH u, t ORDER BY t.id
WITH u, collect(DISTINCT t.id) AS ends
RETURN u.id AS unit, CASE WHEN size(ends) = 0 THEN [u.id] ELSE ends END AS ends
