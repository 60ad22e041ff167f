// ingest_relations: node-to-node edges a batch's units assert, typed by family kind.
// parameters: $rels (list of {src, dst, kind, family, unit[, live]}); src and dst are element
//             ids of :Node nodes (found in the same transaction, see ingest_units); kind is
//             one of synonym, belongs_to, of, related_to, content, superseded, narrowed_by
// returns: created (rows processed)
// The relationship type is the kind upper-cased (SYNONYM, BELONGS_TO, ..., NARROWED_BY),
// created in one CREATE with a dynamic type (Neo4j 5.26+); kinds outside the list create nothing.
// live defaults to true; a staged batch passes false for the edges of units it supersedes itself.
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
UNWIND $rels AS r
MATCH (a:Node {ws: $ws}) WHERE elementId(a) = r.src
MATCH (b:Node {ws: $ws}) WHERE elementId(b) = r.dst
CALL (r, a, b) {
  WITH r, a, b WHERE r.kind IN ['synonym', 'belongs_to', 'of', 'related_to', 'content', 'superseded', 'narrowed_by']
  CREATE (a)-[:$(toUpper(r.kind)) {kind: r.kind, family: r.family, unit: r.unit, live: coalesce(r.live, true)}]->(b)
}
RETURN count(r) AS created
