// jobs_list: newest jobs first, optionally of one user and/or one status (payloads left out).
// parameters: $user (or null), $status (or null), $limit
// returns: job
MATCH (j:KgJob {ws: $ws})
WHERE ($user IS NULL OR j.user = $user) AND ($status IS NULL OR j.status = $status)
RETURN j {.*, payload: null} AS job
ORDER BY j.created_ms DESC, j.id
LIMIT $limit
