// admin_rederive: re-create the derived rows of existing units (kg doctor --repair), after
// admin_drop_derived. Four statements, run in one transaction with the same parameters:
// $nodes [{id, label, kind}], $units [{id, subject, args: [{pos, id}], mods: [{slot, id}]}],
// $rels [{src, dst, type, kind, family, unit}], $pairs [{old, new}]. Node kinds and edge
// liveness are fixed afterwards by admin_fix_nodes, over the whole graph.
UNWIND $nodes AS n
MERGE (x:Node {ws: $ws, id: n.id})
  ON CREATE SET x.label = n.label, x.kind = n.kind;
UNWIND $units AS u
MATCH (x:Unit {ws: $ws, id: u.id}), (s:Node {ws: $ws, id: u.subject})
CREATE (x)-[:SUBJECT]->(s)
WITH x, u
CALL (x, u) {
  UNWIND u.args AS a
  MATCH (n:Node {ws: $ws, id: a.id})
  CREATE (x)-[:ARG {pos: a.pos}]->(n)
}
CALL (x, u) {
  UNWIND u.mods AS m
  MATCH (n:Node {ws: $ws, id: m.id})
  CREATE (x)-[:MOD {slot: m.slot}]->(n)
};
UNWIND $rels AS r
MATCH (a:Node {ws: $ws, id: r.src}), (b:Node {ws: $ws, id: r.dst})
CALL (r, a, b) {
  WITH r, a, b WHERE r.type = 'SYNONYM'
  CREATE (a)-[:SYNONYM {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.type = 'BELONGS_TO'
  CREATE (a)-[:BELONGS_TO {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.type = 'OF'
  CREATE (a)-[:OF {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.type = 'RELATED_TO'
  CREATE (a)-[:RELATED_TO {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.type = 'CONTENT'
  CREATE (a)-[:CONTENT {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.type = 'SUPERSEDED'
  CREATE (a)-[:SUPERSEDED {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.type = 'NARROWED_BY'
  CREATE (a)-[:NARROWED_BY {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
};
UNWIND $pairs AS p
MATCH (o:Unit {ws: $ws, id: p.old}), (n:Unit {ws: $ws, id: p.new})
MERGE (o)-[:SUPERSEDED_BY]->(n);
