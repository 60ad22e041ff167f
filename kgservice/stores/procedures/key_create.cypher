// key_create: store a new API key (only the sha256 of its secret, never the secret).
// parameters: $key_id, $sha256, $user, $role, $created
// returns: key_id
CREATE (k:KgApiKey {key_id: $key_id, sha256: $sha256, user: $user, role: $role, created: $created})
RETURN k.key_id AS key_id
