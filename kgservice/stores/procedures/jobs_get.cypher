// jobs_get: one job with its events (parallel lists ev_status / ev_msg / ev_at).
// parameters: $id
// returns: job
MATCH (j:KgJob {ws: $ws, id: $id})
RETURN j {.*} AS job
