// stage_abandoned: stages whose writer stopped making progress (crashed or killed): no chunk
// for $stale seconds. Their staged data is invisible; stage_discard removes it.
// parameters: $now, $stale. returns: stage (one row per abandoned stage)
MATCH (st:IngestStage)
WHERE st.heartbeat < $now - $stale
RETURN st.id AS stage
