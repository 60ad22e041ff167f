// superseded_end: for each superseded unit among $ids, the terminal (not superseded) units of its
// SUPERSEDED_BY chain. Live units are left out (the caller maps them to themselves): retrieval
// asks about every unit of its 30 best nodes, thousands at 100k units, nearly all live, and a
// row per unit cost more than the walk. One row of parallel lists, not a row per unit.
// Not bounded: unit supersession is acyclic by construction (a new unit can only supersede
// units that already exist), and a chain longer than 10 versions must still end at the
// newest one, as on the embedded store.
// parameters: $ids (list of unit ids)
// returns: one row: units (the superseded ones among $ids), ends (for each, the ordered list
//          of its terminal unit ids)
UNWIND $ids AS id
OPTIONAL MATCH (u:Unit {ws: $ws, id: id}) WHERE (u)-[:SUPERSEDED_BY]->()
WITH DISTINCT u WHERE u IS NOT NULL
MATCH (u)(()-[:SUPERSEDED_BY]->())+(t:Unit {ws: $ws})
WHERE NOT (t)-[:SUPERSEDED_BY]->()
WITH u, t ORDER BY t.id
WITH u, collect(DISTINCT t.id) AS ends
RETURN collect(u.id) AS units, collect(ends) AS ends
