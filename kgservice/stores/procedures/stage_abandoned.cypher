// stage_abandoned: stages whose writer stopped making progress (crashed or killed): no chunk
// for $stale seconds. Unpublished ones are invisible and go with stage_discard; published
// ones only lack their cleanup (stage_cleanup).
// parameters: $now, $stale. returns: stage, published (one row per abandoned stage)
MATCH (st:IngestStage {ws: $ws})
WHERE st.heartbeat < $now - $stale
RETURN st.id AS stage, coalesce(st.published, false) AS published
