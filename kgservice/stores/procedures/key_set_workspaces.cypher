// key_set_workspaces: replace a key's workspaces (a workspace was renamed or deleted).
// parameters: $key_id, $workspaces (JSON: workspace -> role)
MATCH (k:KgApiKey {key_id: $key_id})
SET k.workspaces = $workspaces
