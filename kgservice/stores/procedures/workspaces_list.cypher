// workspaces_list: the workspaces of this database (docs/workspaces.md): each one that holds
// anything has its meta nodes (the change log's state, the lifecycle lock, the marker
// workspace_mark.cypher makes), so the set is read from :KgMeta. Deployment-level: it reads every
// workspace's name and nothing else.
// parameters: none
// returns: name (one row per workspace), ordered
MATCH (m:KgMeta)
WHERE m.ws IS NOT NULL
RETURN DISTINCT m.ws AS name
ORDER BY name
