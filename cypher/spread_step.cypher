// spread_step: one hop of spreading activation. Each frontier node passes
// energy * tau[kind] once per distinct (neighbour, kind): content edges forward only
// (cause -> effect), synonym / belongs_to / of / related_to both ways; only live edges,
// never into literal nodes. Python drives the hops so epsilon prunes the next frontier.
// parameters: $frontier (list of {id, energy}), $tau (map kind -> float)
// returns: node (neighbour id), energy (sum received this hop)
UNWIND $frontier AS f
MATCH (n:Node {id: f.id})
CALL (n) {
  MATCH (n)-[r:SYNONYM|BELONGS_TO|OF|RELATED_TO|CONTENT]->(m:Node)
  WHERE r.live
  RETURN m, r.kind AS kind
  UNION
  MATCH (n)<-[r:SYNONYM|BELONGS_TO|OF|RELATED_TO]-(m:Node)
  WHERE r.live
  RETURN m, r.kind AS kind
}
WITH f, m, kind
WHERE m.kind <> 'literal' AND coalesce($tau[kind], 0.0) > 0.0
RETURN m.id AS node, sum(f.energy * $tau[kind]) AS energy
