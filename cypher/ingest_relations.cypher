// ingest_relations: node-to-node edges a batch's units assert, typed by family kind.
// parameters: $rels (list of {src, dst, kind, family, unit}); kind is one of synonym,
//             belongs_to, of, related_to, content, superseded, narrowed_by
// returns: created (edges written)
UNWIND $rels AS r
MATCH (a:Node {id: r.src}), (b:Node {id: r.dst})
CALL (r, a, b) {
  WITH r, a, b WHERE r.kind = 'synonym'
  CREATE (a)-[:SYNONYM {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.kind = 'belongs_to'
  CREATE (a)-[:BELONGS_TO {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.kind = 'of'
  CREATE (a)-[:OF {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.kind = 'related_to'
  CREATE (a)-[:RELATED_TO {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.kind = 'content'
  CREATE (a)-[:CONTENT {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.kind = 'superseded'
  CREATE (a)-[:SUPERSEDED {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
CALL (r, a, b) {
  WITH r, a, b WHERE r.kind = 'narrowed_by'
  CREATE (a)-[:NARROWED_BY {kind: r.kind, family: r.family, unit: r.unit, live: true}]->(b)
}
RETURN count(r) AS created
