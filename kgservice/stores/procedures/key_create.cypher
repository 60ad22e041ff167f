// key_create: store a new API key (only the sha256 of its secret, never the secret). Keys belong to
// the deployment: no ws property; $workspaces is the JSON of its workspaces with a role in each.
// parameters: $key_id, $sha256, $user, $role, $created, $workspaces
// returns: key_id
CREATE (k:KgApiKey {key_id: $key_id, sha256: $sha256, user: $user, role: $role, created: $created,
                    workspaces: $workspaces})
RETURN k.key_id AS key_id
