// key_list: every API key, without its digest, oldest first per user.
// parameters: none
// returns: key_id, user, role, created, last_used, revoked_at, workspaces
MATCH (k:KgApiKey)
RETURN k.key_id AS key_id, k.user AS user, k.role AS role, k.created AS created,
       k.last_used AS last_used, k.revoked_at AS revoked_at, k.workspaces AS workspaces
ORDER BY k.user, k.created, k.key_id
