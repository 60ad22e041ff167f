// life_revive: units whose superseding unit was retracted are live again when nothing else
// supersedes them: their node-to-node edges are live again (as if the retracted unit had never
// been ingested). Runs in the lifecycle change's transaction after life_retract.
// parameters: $olds (unit ids life_retract reported as superseded by a retracted unit)
// returns: unit, nodes (the node ids each revived unit mentions: their rows changed)
UNWIND $olds AS old
MATCH (o:Unit {ws: $ws, id: old})
WHERE NOT (o)-[:SUPERSEDED_BY]->(:Unit {ws: $ws})
CALL (o, old) {
  MATCH (o)-[:SUBJECT|ARG|MOD]->(x:Node {ws: $ws}), (o)-[:SUBJECT|ARG|MOD]->(y:Node {ws: $ws})
  MATCH (x)-[r]->(y)
  WHERE r.unit = old
  WITH DISTINCT r
  SET r.live = true
}
CALL (o) {
  MATCH (o)-[:SUBJECT|ARG|MOD]->(n:Node {ws: $ws})
  RETURN collect(DISTINCT n.id) AS nodes
}
RETURN old AS unit, nodes
