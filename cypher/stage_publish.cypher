// stage_publish: make a staged batch visible, inside the publish transaction (with the kind
// upgrades, relations and supersessions of the batch, run after these statements).
// parameters: $stage. returns: nodes, units (how many were published).
// Relabelling a node is a small change per node (no properties or edges are written), so
// this transaction stays a fraction of the staging ones; the unique constraints on
// :Node / :Unit ids are checked here, when the label is added.
MATCH (n:StagedNode {stage: $stage})
SET n:Node
REMOVE n:StagedNode, n.stage
RETURN count(n) AS nodes;
MATCH (u:StagedUnit {stage: $stage})
SET u:Unit
REMOVE u:StagedUnit, u.stage
RETURN count(u) AS units;
MATCH (st:IngestStage {id: $stage})
DELETE st
