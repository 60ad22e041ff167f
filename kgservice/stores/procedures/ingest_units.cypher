// ingest_units: create units with their SUBJECT, ARG {pos} and MOD {slot} edges.
// parameters: $units (list of {id, json, text, predicate, family, kind, doc, mode,
//             ingested_at, probe, subject, args: [{pos, node}], mods: [{slot, node}]}); subject and
//             node are element ids of :Node nodes (existing_nodes / ingest_new_nodes, same
//             transaction)
// returns: created (units written)
// Nodes are found by element id (a direct record read) rather than by :Node(id):
// MATCH (n:Node {id: ...}) takes a locking unique-index seek inside a write transaction; an
// element id is a direct record read.
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
UNWIND $units AS u
CREATE (x:Unit {ws: $ws, id: u.id, json: u.json, text: u.text, predicate: u.predicate, family: u.family,
                kind: u.kind, doc: u.doc, mode: u.mode, ingested_at: u.ingested_at,
                probe: u.probe})
WITH x, u
MATCH (s:Node {ws: $ws}) WHERE elementId(s) = u.subject
CREATE (x)-[:SUBJECT]->(s)
WITH x, u
CALL (x, u) {
  UNWIND u.args AS a
  MATCH (n:Node {ws: $ws}) WHERE elementId(n) = a.node
  CREATE (x)-[:ARG {pos: a.pos}]->(n)
}
CALL (x, u) {
  UNWIND u.mods AS m
  MATCH (n:Node {ws: $ws}) WHERE elementId(n) = m.node
  CREATE (x)-[:MOD {slot: m.slot}]->(n)
}
RETURN count(x) AS created
