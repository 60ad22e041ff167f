// publish_relations: node-to-node edges of a staged batch, created in its publish transaction,
// found by node id (the one-transaction path, ingest_relations, links by element id).
// parameters: $rels (list of {src, dst, kind, family, unit[, live]}); kind is one of synonym,
//             belongs_to, of, related_to, content, superseded, narrowed_by
// returns: created (rows processed)
// The relationship type is the kind upper-cased (SYNONYM, BELONGS_TO, ..., NARROWED_BY),
// created in one CREATE with a dynamic type (Neo4j 5.26+); kinds outside the list create nothing.
// live defaults to true; a staged batch passes false for the edges of units it supersedes itself.
UNWIND $rels AS r
MATCH (a:Node {ws: $ws, id: r.src}), (b:Node {ws: $ws, id: r.dst})
CALL (r, a, b) {
  WITH r, a, b WHERE r.kind IN ['synonym', 'belongs_to', 'of', 'related_to', 'content', 'superseded', 'narrowed_by']
  CREATE (a)-[:$(toUpper(r.kind)) {kind: r.kind, family: r.family, unit: r.unit, live: coalesce(r.live, true)}]->(b)
}
RETURN count(r) AS created
