// life_retract: take live units out of the graph into the archive, inside a lifecycle change's
// transaction (kgservice/stores/neo4j/lifecycle.py). Three statements, in order, with the same
// parameters: $ids (unit ids; ids that are not live units are skipped), $change, $at, $reason.
// 1. returns per live unit: unit, subject (node id), kind (family kind), nodes (every node id it
//    mentions) and olds (units it supersedes that are not retracted with it: they may be live
//    again, life_revive).
// 2. deletes the node-to-node edges the units asserted (r.unit), found between nodes the unit
//    mentions (expand-into, so a hub's other edges are not walked).
// 3. deletes their SUBJECT / ARG / MOD edges and supersession links (both ways) and relabels
//    them :RetractedUnit (kept with their JSON, their FROM edges to the documents stating them,
//    the change that retracted them, when and why, and the units that superseded them, so an
//    undo links them again). No read path matches :RetractedUnit, and with
//    no edge to a :Node no traversal reaches one: search, expansion, answers, export, MCP and
//    the kg.* procedures stop seeing them. An older archived copy of the same id is replaced.
//    returns: retracted (how many)
UNWIND $ids AS id
MATCH (u:Unit {ws: $ws, id: id})
CALL (u) {
  MATCH (u)-[:SUBJECT|ARG|MOD]->(n:Node {ws: $ws})
  RETURN collect(DISTINCT n.id) AS nodes
}
CALL (u) {
  OPTIONAL MATCH (u)-[:SUBJECT]->(s:Node {ws: $ws})
  RETURN s.id AS subject LIMIT 1
}
CALL (u) {
  OPTIONAL MATCH (o:Unit {ws: $ws})-[:SUPERSEDED_BY]->(u)
  WHERE NOT o.id IN $ids
  RETURN collect(DISTINCT o.id) AS olds
}
RETURN u.id AS unit, subject, u.kind AS kind, nodes, olds;
UNWIND $ids AS id
MATCH (u:Unit {ws: $ws, id: id})
CALL (u, id) {
  MATCH (u)-[:SUBJECT|ARG|MOD]->(x:Node {ws: $ws}), (u)-[:SUBJECT|ARG|MOD]->(y:Node {ws: $ws})
  MATCH (x)-[r]->(y)
  WHERE r.unit = id
  WITH DISTINCT r
  DELETE r
}
RETURN count(u) AS units;
UNWIND $ids AS id
MATCH (u:Unit {ws: $ws, id: id})
SET u.superseded_by = [(u)-[:SUPERSEDED_BY]->(n:Unit {ws: $ws}) | n.id]
WITH u, id
CALL (u) {
  MATCH (u)-[e:SUBJECT|ARG|MOD|SUPERSEDED_BY]-()
  DELETE e
}
CALL (id) {
  OPTIONAL MATCH (old:RetractedUnit {ws: $ws, id: id})
  DETACH DELETE old
}
REMOVE u:Unit
SET u:RetractedUnit, u.change = $change, u.at = $at, u.reason = $reason
RETURN count(u) AS retracted
