// key_touch: record when a key was last used (the server calls this at most once a minute per key).
// parameters: $key_id, $at
MATCH (k:KgApiKey {key_id: $key_id})
SET k.last_used = $at
