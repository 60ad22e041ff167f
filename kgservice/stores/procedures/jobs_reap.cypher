// jobs_reap: fail the jobs whose lease expired on their last allowed attempt (a worker died
// every time), with the reason as the error; a job whose lease expired after a cancel was
// requested becomes 'cancelled' instead (jobs_cancel_expired runs first). Lock-then-recheck like jobs_claim.
// parameters: $message (with {n} for the attempts)
// returns: failed (count)
MATCH (j:KgJob {ws: $ws, status: 'running'})
WHERE j.lease_until < timestamp() AND j.attempts >= j.max_attempts AND NOT coalesce(j.cancel_requested, false)
SET j._lock = true
REMOVE j._lock
WITH j WHERE j.status = 'running' AND j.lease_until < timestamp() AND j.attempts >= j.max_attempts
WITH j, replace($message, '{n}', toString(j.attempts)) AS why
SET j.status = 'failed', j.error = why, j.updated_ms = timestamp(),
    j.ev_status = j.ev_status + 'failed', j.ev_msg = j.ev_msg + why, j.ev_at = j.ev_at + timestamp()
RETURN count(j) AS failed
