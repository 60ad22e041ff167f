// ingest_units: create units with their SUBJECT, ARG {pos} and MOD {slot} edges.
// parameters: $units (list of {id, json, text, subject, predicate, family, kind, doc, mode,
//             ingested_at, args: [{pos, id}], mods: [{slot, id}]})
// returns: created (units written)
UNWIND $units AS u
CREATE (x:Unit {id: u.id, json: u.json, text: u.text, predicate: u.predicate, family: u.family,
                kind: u.kind, doc: u.doc, mode: u.mode, ingested_at: u.ingested_at})
WITH x, u
MATCH (s:Node {id: u.subject})
CREATE (x)-[:SUBJECT]->(s)
WITH x, u
CALL (x, u) {
  UNWIND u.args AS a
  MATCH (n:Node {id: a.id})
  CREATE (x)-[:ARG {pos: a.pos}]->(n)
}
CALL (x, u) {
  UNWIND u.mods AS m
  MATCH (n:Node {id: m.id})
  CREATE (x)-[:MOD {slot: m.slot}]->(n)
}
RETURN count(x) AS created
