// jobs_cancel_expired: a running job with cancel_requested whose lease expired (its worker died
// or stopped) becomes 'cancelled' rather than running again. Lock-then-recheck.
// returns: cancelled (count)
MATCH (j:KgJob {ws: $ws, status: 'running'})
WHERE j.lease_until < timestamp() AND coalesce(j.cancel_requested, false)
SET j._lock = true
REMOVE j._lock
WITH j WHERE j.status = 'running' AND j.lease_until < timestamp() AND coalesce(j.cancel_requested, false)
SET j.status = 'cancelled', j.updated_ms = timestamp(),
    j.ev_status = j.ev_status + 'cancelled', j.ev_msg = j.ev_msg + 'cancelled (the worker stopped holding it)',
    j.ev_at = j.ev_at + timestamp()
RETURN count(j) AS cancelled
