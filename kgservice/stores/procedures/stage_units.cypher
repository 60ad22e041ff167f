// stage_units: one bounded chunk of a big batch's units with their SUBJECT / ARG / MOD edges,
// created as :StagedUnit (invisible to readers: every read matches :Unit).
// parameters: $stage, $now, $units (list of {id, json, text, predicate, family, kind, doc, mode,
//             ingested_at, probe, edges: [{type: SUBJECT|ARG|MOD, id, new, props}]}); an edge's
//             target is a :StagedNode of this stage when new, else a published :Node.
// returns: created (units staged)
MATCH (st:IngestStage {ws: $ws, id: $stage})
SET st.heartbeat = $now
WITH st
UNWIND $units AS u
CREATE (x:StagedUnit {ws: $ws, id: u.id, json: u.json, text: u.text, predicate: u.predicate, family: u.family,
                      kind: u.kind, doc: u.doc, mode: u.mode, ingested_at: u.ingested_at, probe: u.probe,
                      stage: $stage})
WITH x, u
CALL (x, u) {
  UNWIND u.edges AS e
  CALL (e) {
    WITH e WHERE e.new
    MATCH (n:StagedNode {ws: $ws, id: e.id, stage: $stage})
    RETURN n
    UNION
    WITH e WHERE NOT e.new
    MATCH (n:Node {ws: $ws, id: e.id})
    RETURN n
  }
  CREATE (x)-[r:$(e.type)]->(n)
  SET r += e.props
}
RETURN count(x) AS created
