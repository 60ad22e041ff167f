// jobs_prune: delete up to $batch finished jobs (done, failed, cancelled) whose last change is more
// than $age_ms old by the database's clock (kg jobs prune, POST /v1/jobs/prune). Queued and
// running jobs are never touched; the caller repeats until fewer than $batch were deleted.
// parameters: $age_ms, $batch
// returns: pruned
MATCH (j:KgJob {ws: $ws})
WHERE j.status IN ['done', 'failed', 'cancelled'] AND j.updated_ms < timestamp() - $age_ms
WITH j LIMIT $batch
DETACH DELETE j
RETURN count(*) AS pruned
