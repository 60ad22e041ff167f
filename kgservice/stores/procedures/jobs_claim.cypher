// jobs_claim: lock-then-recheck (docs/SERVICE.md §3). Pick the oldest claimable job, take its
// write lock (SET + REMOVE of a dummy property), then test again: a concurrent claimer that
// committed first has changed it, and this transaction then claims nothing. The naive
// MATCH ... SET hands one job to several concurrent claimers; this does not.
// parameters: $worker, $lease_ms
// returns: job (zero rows: nothing claimable, or lost the race)
MATCH (j:KgJob {ws: $ws})
WHERE j.status = 'queued' OR (j.status = 'running' AND j.lease_until < timestamp() AND j.attempts < j.max_attempts
       AND NOT coalesce(j.cancel_requested, false))
WITH j ORDER BY j.created_ms, j.id LIMIT 1
SET j._lock = true
REMOVE j._lock
WITH j, j.status AS was, j.owner AS previous
WHERE j.status = 'queued' OR (j.status = 'running' AND j.lease_until < timestamp() AND j.attempts < j.max_attempts
       AND NOT coalesce(j.cancel_requested, false))
SET j.status = 'running', j.owner = $worker, j.lease_until = timestamp() + $lease_ms,
    j.attempts = j.attempts + 1, j.updated_ms = timestamp(),
    j.ev_status = j.ev_status + 'running',
    j.ev_msg = j.ev_msg + ('claimed by ' + $worker +
                           CASE WHEN was = 'running' THEN ' (lease of ' + previous + ' expired)' ELSE '' END),
    j.ev_at = j.ev_at + timestamp()
RETURN j {.*} AS job
