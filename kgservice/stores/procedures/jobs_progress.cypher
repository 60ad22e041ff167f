// jobs_progress: add an event to a running job this worker holds.
// parameters: $id, $worker, $message
// returns: ok (1 or 0)
MATCH (j:KgJob {ws: $ws, id: $id})
SET j._lock = true
REMOVE j._lock
WITH j WHERE j.status = 'running' AND j.owner = $worker
SET j.ev_status = j.ev_status + 'running', j.ev_msg = j.ev_msg + $message, j.ev_at = j.ev_at + timestamp()
RETURN count(j) AS ok
