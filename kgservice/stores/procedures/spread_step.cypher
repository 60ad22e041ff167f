// spread_step: one hop of spreading activation. Each frontier node passes
// energy * tau[kind] once per distinct (neighbour, kind): content edges forward only
// (cause -> effect), synonym / belongs_to / of / related_to both ways; only live edges,
// never into literal nodes. Python drives the hops so epsilon prunes the next frontier.
// The frontier comes in, and the result goes out, as two parallel lists: a hop near a hub
// touches thousands of nodes, and one row of lists costs a fraction of thousands of rows.
// Fan-out constraint: with $max_fanout set, a frontier node with more relation edges of the
// five spreading kinds (either direction, retired ones included: the stored degree) passes nothing.
// parameters: $ids (frontier node ids), $energies (their energies, same order), $tau (map kind -> float),
//             $max_fanout (int, or null for no constraint),
//             $degree_damping (float >= 0; 0 = no damping): each row carries
//             energy / max(1, d)^$degree_damping * tau[kind], d = the node's rows this hop
// returns: one row: nodes (neighbour ids), energies (sum each received this hop, same order)
UNWIND range(0, size($ids) - 1) AS i
WITH $ids[i] AS id, $energies[i] AS energy
MATCH (n:Node {ws: $ws, id: id})
WHERE $max_fanout IS NULL
   OR COUNT { (n)-[:SYNONYM|BELONGS_TO|OF|RELATED_TO|CONTENT]->() }
      + COUNT { (n)<-[:SYNONYM|BELONGS_TO|OF|RELATED_TO|CONTENT]-() } <= $max_fanout
CALL (n) {
  MATCH (n)-[r:SYNONYM|BELONGS_TO|OF|RELATED_TO|CONTENT]->(m:Node {ws: $ws})
  WHERE r.live
  RETURN m, r.kind AS kind
  UNION
  MATCH (n)<-[r:SYNONYM|BELONGS_TO|OF|RELATED_TO]-(m:Node {ws: $ws})
  WHERE r.live
  RETURN m, r.kind AS kind
}
WITH n, energy, m, kind
WHERE m.kind <> 'literal' AND coalesce($tau[kind], 0.0) > 0.0
// hub damping: a node with d rows this hop passes energy / d^$degree_damping along each
WITH n, energy, collect([m.id, kind]) AS rows
WITH energy / (CASE WHEN size(rows) > 1 THEN size(rows) ELSE 1 END) ^ $degree_damping AS e, rows
UNWIND rows AS row
WITH row[0] AS node, sum(e * $tau[row[1]]) AS energy
RETURN collect(node) AS nodes, collect(energy) AS energies
