// causal_step: one hop of a causal chain (kgservice/expansion/causal.py): the live content
// edges of one family (导致: causes / leads to / 引起 …) leaving the given nodes, cause -> effect.
// Edges of superseded units are not live, so a chain never walks a retired fact; literal
// effects are left out (a chain continues through concepts). Python drives the hops.
// parameters: $ids (node ids), $family (the family base member, e.g. '导致')
// returns: one row per edge: src, dst, unit (sorted)
UNWIND $ids AS id
MATCH (n:Node {id: id})-[r:CONTENT]->(m:Node)
WHERE r.live AND r.family = $family AND m.kind <> 'literal'
RETURN DISTINCT n.id AS src, m.id AS dst, r.unit AS unit
ORDER BY src, dst, unit
