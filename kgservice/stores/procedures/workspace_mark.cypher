// workspace_mark: make the workspace exist while it holds nothing yet (`kg workspaces create`):
// its marker meta node. parameters: ws (the workspace). returns: created (false when it was there).
MERGE (m:KgMeta {ws: $ws, id: 'workspace'})
ON CREATE SET m.created_ms = timestamp(), m._new = true
WITH m, coalesce(m._new, false) AS created
REMOVE m._new
RETURN created
