// stage_supersessions: old -[:SUPERSEDED_BY]-> new between two units of the same staged batch
// (both still :StagedUnit, so no read sees the edge before the publish). Their retired
// node-to-node edges are created with live = false at publish instead of being retired then.
// parameters: $stage, $pairs (list of {old, new}). returns: linked
UNWIND $pairs AS p
MATCH (o:StagedUnit {ws: $ws, id: p.old, stage: $stage}), (n:StagedUnit {ws: $ws, id: p.new, stage: $stage})
MERGE (o)-[:SUPERSEDED_BY]->(n)
RETURN count(p) AS linked
