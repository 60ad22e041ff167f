// stage_cleanup: after a stage is published, drop its staging labels and properties in
// bounded transactions (readers already see the batch; nothing they read changes). Each
// statement runs one chunk per transaction until it reports 0, then the next one.
// parameters: $stage, $limit. returns: done (changed in this chunk)
MATCH (u:StagedUnit:Unit {ws: $ws, stage: $stage})
WITH u LIMIT $limit
REMOVE u:StagedUnit, u.stage
RETURN count(*) AS removed;
MATCH (n:StagedNode:Node {ws: $ws, stage: $stage})
WITH n LIMIT $limit
REMOVE n:StagedNode, n.stage
RETURN count(*) AS removed;
MATCH (st:IngestStage {ws: $ws, id: $stage, published: true})
DELETE st
RETURN 0 AS removed
