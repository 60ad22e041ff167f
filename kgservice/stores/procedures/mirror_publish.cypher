// mirror_publish: store the graphify mirror built at change-log version $version, replacing an older
// one, and end the builder's lease. Compare-and-set: refused (nothing written) when a mirror of
// $version or later is already stored, or another process has taken the lease since (ours expired).
// The content goes in (:KgMirrorChunk) nodes (gzip'd graph.json cut in pieces: no single huge property).
// parameters: $owner, $version, $digest, $chunks (list of byte arrays)
// returns: published (true / false)
MATCH (m:KgMeta {ws: $ws, id: 'graphify_mirror'})
SET m._lock = true
REMOVE m._lock
WITH m WHERE coalesce(m.version, -1) < $version AND (m.owner IS NULL OR m.owner = $owner)
CALL (m) {
  OPTIONAL MATCH (old:KgMirrorChunk {ws: $ws})
  DELETE old
}
WITH m
UNWIND range(0, size($chunks) - 1) AS seq
CREATE (:KgMirrorChunk {ws: $ws, version: $version, seq: seq, data: $chunks[seq]})
WITH m, count(*) AS written
SET m.version = $version, m.digest = $digest, m.chunks = written, m.owner = null, m.building = null,
    m.lease_until = null, m.built_ms = timestamp()
RETURN true AS published
