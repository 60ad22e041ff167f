// session_create: a web sign-in (kgservice/stores/sessions.py), after deleting up to $sweep expired
// ones. Times are the database's clock, so every server agrees on an expiry.
// parameters: $id (sha256 of the cookie token), $key_id, $csrf, $ttl_ms, $sweep
// returns: expires_ms
CALL {
  MATCH (old:KgSession) WHERE old.expires_ms <= timestamp()
  WITH old LIMIT $sweep
  DELETE old
}
CREATE (s:KgSession {id: $id, key_id: $key_id, csrf: $csrf, created_ms: timestamp(),
                     expires_ms: timestamp() + $ttl_ms})
RETURN s.expires_ms AS expires_ms
