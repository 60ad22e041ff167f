// session_get: a live web sign-in by id (sha256 of its cookie token); nothing when unknown or expired.
// Run in a write-routed transaction (Neo4jSessionTable): on a cluster a server must see the
// session another server created a moment ago, which a lagging secondary may not have yet.
// parameters: $id
// returns: id, key_id, csrf, expires_ms, flash_path (null when no flash waits or it expired)
MATCH (s:KgSession {id: $id}) WHERE s.expires_ms > timestamp()
RETURN s.id AS id, s.key_id AS key_id, s.csrf AS csrf, s.expires_ms AS expires_ms,
       CASE WHEN s.flash_until_ms > timestamp() THEN s.flash_path END AS flash_path
