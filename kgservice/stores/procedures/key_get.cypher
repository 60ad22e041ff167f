// key_get: one API key by its key_id, for verifying a presented key (every request).
// parameters: $key_id
// returns: key_id, sha256, user, role, created, last_used, revoked_at, workspaces (null: a key of
// `default`, made before workspaces) (no row: unknown key)
MATCH (k:KgApiKey {key_id: $key_id})
RETURN k.key_id AS key_id, k.sha256 AS sha256, k.user AS user, k.role AS role, k.created AS created,
       k.last_used AS last_used, k.revoked_at AS revoked_at, k.workspaces AS workspaces
