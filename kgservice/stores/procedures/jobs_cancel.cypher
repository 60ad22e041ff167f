// jobs_cancel: a queued job (or a running one whose lease expired: its worker is gone) becomes
// 'cancelled' and is never claimed; a running job gets cancel_requested (its worker stops at
// its next check, best effort); a finished job is left alone. Lock, then check.
// parameters: $id, $by (who cancels)
// returns: outcome ('cancelled' | 'requested' | 'final'), job (zero rows: no such job)
MATCH (j:KgJob {ws: $ws, id: $id})
SET j._lock = true
REMOVE j._lock
WITH j, CASE
  WHEN j.status = 'queued' OR (j.status = 'running' AND j.lease_until < timestamp()) THEN 'cancelled'
  WHEN j.status = 'running' THEN 'requested'
  ELSE 'final' END AS outcome
FOREACH (_ IN CASE WHEN outcome = 'cancelled' THEN [1] ELSE [] END |
  SET j.status = 'cancelled', j.cancel_requested = true, j.updated_ms = timestamp(),
      j.ev_status = j.ev_status + 'cancelled', j.ev_msg = j.ev_msg + ('cancelled by ' + $by),
      j.ev_at = j.ev_at + timestamp())
FOREACH (_ IN CASE WHEN outcome = 'requested' THEN [1] ELSE [] END |
  SET j.cancel_requested = true, j.updated_ms = timestamp(),
      j.ev_status = j.ev_status + 'running',
      j.ev_msg = j.ev_msg + ('cancel requested by ' + $by +
                             '; the worker stops at its next check unless the ingest is already being stored'),
      j.ev_at = j.ev_at + timestamp())
RETURN outcome, j {.*, payload: null} AS job
