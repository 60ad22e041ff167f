// workspace_rename: give every node of workspace $ws the workspace $new, in batches (a property
// rewrite: relationships never cross workspaces, so they follow their nodes). The caller checks
// that $new holds nothing and that no server serves $ws. Idempotent: a rename that stopped
// half-way is finished by running it again.
// parameters: ws (the workspace renamed), new (its new name)
// returns: nothing
MATCH (n)
WHERE n.ws = $ws
CALL (n) { SET n.ws = $new } IN TRANSACTIONS OF 10000 ROWS
