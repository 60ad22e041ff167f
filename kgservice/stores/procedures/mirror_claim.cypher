// mirror_claim: take the lease to build the graphify mirror of change-log version $version.
// Lock-then-recheck on the one (:KgMeta {id: 'graphify_mirror'}) node (unique id: concurrent MERGEs
// meet on one node): granted only when no mirror of $version or later is stored and nobody else
// holds a live lease, so of two servers wanting the same version one builds and the other waits.
// Times are the database's clock. parameters: $owner, $version, $lease_ms
// returns: granted (true / false)
MERGE (m:KgMeta {ws: $ws, id: 'graphify_mirror'})
SET m._lock = true
REMOVE m._lock
WITH m, coalesce(m.version, -1) < $version AS wanted,
     (m.owner IS NULL OR m.owner = $owner OR coalesce(m.lease_until, 0) < timestamp()) AS free
FOREACH (_ IN CASE WHEN wanted AND free THEN [1] ELSE [] END |
  SET m.owner = $owner, m.building = $version, m.lease_until = timestamp() + $lease_ms)
RETURN wanted AND free AS granted
