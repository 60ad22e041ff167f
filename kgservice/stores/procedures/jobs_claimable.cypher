// jobs_claimable: is any job claimable (queued, or running with an expired lease and attempts
// left)? A claim that lost a race asks this before trying again.
// parameters: none
// returns: n
MATCH (j:KgJob {ws: $ws})
WHERE j.status = 'queued' OR (j.status = 'running' AND j.lease_until < timestamp() AND j.attempts < j.max_attempts)
RETURN count(j) AS n
