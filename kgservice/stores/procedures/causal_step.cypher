// causal_step: one hop of a causal chain (kgservice/expansion/causal.py): the live content
// edges of one family (导致: causes / leads to / 引起 …) leaving the given nodes, cause -> effect.
// Edges of superseded units are not live, so a chain never walks a retired fact. An effect
// stated as a value ({December 2008 snow event} [caused] (widespread difficulties)) has no
// edge: it is read off the node's own live units of the family (their SUBJECT, no
// SUPERSEDED_BY), each literal argument a row; an inverse unit ("[caused by]": its subject is
// the effect) is skipped, read from its JSON, where '"inverse":true' can only be the field (a
// quote inside a string value is escaped). The chain ends at a value: nothing leaves it.
// Python drives the hops.
// parameters: $ids (node ids), $family (the family base member, e.g. '导致')
// returns: one row per edge: src, dst, unit (sorted)
UNWIND $ids AS id
MATCH (n:Node {ws: $ws, id: id})
CALL (n) {
  MATCH (n)-[r:CONTENT]->(m:Node {ws: $ws})
  WHERE r.live AND r.family = $family
  RETURN m.id AS dst, r.unit AS unit
  UNION
  MATCH (n)<-[:SUBJECT]-(u:Unit {ws: $ws, family: $family})-[:ARG]->(m:Node {ws: $ws, kind: 'literal'})
  WHERE NOT EXISTS { (u)-[:SUPERSEDED_BY]->() } AND NOT u.json CONTAINS '"inverse":true'
  RETURN m.id AS dst, u.id AS unit
}
RETURN DISTINCT n.id AS src, dst, unit
ORDER BY src, dst, unit
