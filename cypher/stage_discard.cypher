// stage_discard: remove a stage that will not be published (it failed, or a crashed writer
// abandoned it), in bounded transactions: each statement is run, one chunk per transaction,
// until it reports 0 removed; then the next one.
// parameters: $stage, $limit. returns: removed (deleted in this chunk)
MATCH (u:StagedUnit {stage: $stage})
WITH u LIMIT $limit
DETACH DELETE u
RETURN count(*) AS removed;
MATCH (n:StagedNode {stage: $stage})
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS removed;
MATCH (st:IngestStage {id: $stage})
DELETE st
RETURN 0 AS removed
