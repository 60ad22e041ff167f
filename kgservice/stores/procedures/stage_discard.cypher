// stage_discard: remove a stage that was not published (it failed, or a crashed writer
// abandoned it), in bounded transactions: each statement is run, one chunk per transaction,
// until it reports 0 removed; then the next one. Published data (:Unit / :Node) is never
// touched: a published stage is finished by stage_cleanup instead.
// parameters: $stage, $limit. returns: removed (deleted in this chunk)
MATCH (u:StagedUnit {ws: $ws, stage: $stage})
WHERE NOT u:Unit
WITH u LIMIT $limit
DETACH DELETE u
RETURN count(*) AS removed;
MATCH (n:StagedNode {ws: $ws, stage: $stage})
WHERE NOT n:Node
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS removed;
MATCH (st:IngestStage {ws: $ws, id: $stage})
WHERE st.published IS NULL
DELETE st
RETURN 0 AS removed
