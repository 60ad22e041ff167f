// life_unarchive: units of a lifecycle change that are live again (an undo) leave the archive:
// the :RetractedUnit copy's FROM edges move to the live :Unit, the live units that superseded it
// when it was retracted supersede it again (its node-to-node edges retired, as
// retire_superseded does), and the copy is deleted. Runs in the change's transaction after its
// new units were created.
// parameters: $ids (unit ids the change made live)
// returns: unarchived (how many)
UNWIND $ids AS id
MATCH (r:RetractedUnit {ws: $ws, id: id})
MATCH (u:Unit {ws: $ws, id: id})
CALL (r, u) {
  MATCH (r)-[f:FROM]->(d:Document {ws: $ws})
  CREATE (u)-[:FROM {lines: f.lines}]->(d)
}
CALL (r, u) {
  UNWIND coalesce(r.superseded_by, []) AS newer
  MATCH (n:Unit {ws: $ws, id: newer})
  MERGE (u)-[:SUPERSEDED_BY]->(n)
}
CALL (u, id) {
  WITH u, id WHERE EXISTS { (u)-[:SUPERSEDED_BY]->(:Unit {ws: $ws}) }
  MATCH (u)-[:SUBJECT|ARG|MOD]->(x:Node {ws: $ws}), (u)-[:SUBJECT|ARG|MOD]->(y:Node {ws: $ws})
  MATCH (x)-[e]->(y)
  WHERE e.unit = id
  WITH DISTINCT e
  SET e.live = false
}
DETACH DELETE r
RETURN count(*) AS unarchived
