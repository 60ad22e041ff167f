// jobs_heartbeat: extend the lease of a job this worker still holds (lock, then check owner).
// parameters: $id, $worker, $lease_ms
// returns: ok (1 if extended, 0 if the worker no longer holds the job)
MATCH (j:KgJob {ws: $ws, id: $id})
SET j._lock = true
REMOVE j._lock
WITH j WHERE j.status = 'running' AND j.owner = $worker
SET j.lease_until = timestamp() + $lease_ms
RETURN count(j) AS ok
