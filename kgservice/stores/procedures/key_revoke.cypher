// key_revoke: mark a key revoked (kept for the audit trail); revoking twice keeps the first time.
// parameters: $key_id, $at
// returns: revoked_at (no row: unknown key)
MATCH (k:KgApiKey {key_id: $key_id})
SET k.revoked_at = coalesce(k.revoked_at, $at)
RETURN k.revoked_at AS revoked_at
