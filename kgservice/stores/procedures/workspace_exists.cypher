// workspace_exists: whether anything of the workspace is stored (its meta nodes: see workspaces_list).
// parameters: ws (the workspace). returns: exists
RETURN EXISTS { MATCH (m:KgMeta {ws: $ws}) } AS exists
