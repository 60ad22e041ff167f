// jobs_finish: done or failed, only by the worker that holds the job (a worker whose lease
// expired and was reclaimed changes nothing). Lock, then check.
// parameters: $id, $worker, $status ('done' | 'failed'), $result (JSON text or null), $error, $message
// returns: ok (1 or 0)
MATCH (j:KgJob {ws: $ws, id: $id})
SET j._lock = true
REMOVE j._lock
WITH j WHERE j.status = 'running' AND j.owner = $worker
SET j.status = $status, j.result = $result, j.error = $error, j.updated_ms = timestamp(),
    j.ev_status = j.ev_status + $status, j.ev_msg = j.ev_msg + $message, j.ev_at = j.ev_at + timestamp()
RETURN count(j) AS ok
