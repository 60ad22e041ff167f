// stage_publish: make a staged batch visible, inside the publish transaction (with the kind
// upgrades, relations and supersessions of the batch, run after these statements).
// parameters: $stage. returns: nodes, units (how many were published).
// Only a label is added per node and unit (the cheapest change Neo4j has in transaction state,
// about half of swapping labels and dropping the stage property): the staging label and
// property are removed afterwards, in bounded
// transactions, by stage_cleanup. The unique constraints on :Node / :Unit ids are checked
// here, when the label is added.
MATCH (n:StagedNode {ws: $ws, stage: $stage})
SET n:Node
RETURN count(n) AS nodes;
MATCH (u:StagedUnit {ws: $ws, stage: $stage})
SET u:Unit
RETURN count(u) AS units;
MATCH (st:IngestStage {ws: $ws, id: $stage})
SET st.published = true
