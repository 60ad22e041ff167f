// workspace_delete: every node of workspace $ws and its relationships, in batches: relationships
// first (a DETACH DELETE batch of hub nodes would carry every edge of every hub, as wipe.cypher
// explains), then the nodes. Other workspaces are untouched (relationships never cross one).
// parameters: ws (the workspace deleted)
// returns: nothing
MATCH (:Node|Unit|RetractedUnit|StagedNode|StagedUnit|Document {ws: $ws})-[r]->()
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n)
WHERE n.ws = $ws
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
