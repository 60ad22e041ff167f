// wipe: delete this workspace's knowledge (nodes whose ws is $ws; other workspaces untouched) (units, nodes, relations, staging, the change log) in batches, for
// `kg restore --replace`. Service state survives: API keys (:KgApiKey), ingest jobs (:KgJob), saved results (:KgSavedResult),
// web sign-ins (:KgSession), the servers' heartbeats (:KgServer),
// entity-resolution decisions (:KgMergeDecision),
// the change-log version (:KgMeta), the record of the restore under way (:KgRestore) and schema markers (:KgSchema, which say what the store's
// data already carries; an empty store carries everything), so a restore does not lock the team out or forget queued
// work, and the version only ever grows: the store logs an "everything" change around the wipe
// (Neo4jStore.wipe), which tells every server to clear its caches. A version restarting at 0
// could be overtaken by the restore's own ingests before a server noticed the reset.
// Relationships go first, in batches of their own: a DETACH DELETE batch of nodes carries every
// edge of every hub in it (tens of thousands at 1M units), which ran a 3g heap out of
// transaction memory; deleting edges first bounds each transaction by its row count.
// Service-state nodes have no relationships, so the first statement never touches them.
// parameters: ws (the workspace; added by the connection)
// returns: nothing
MATCH (:Node|Unit|RetractedUnit|StagedNode|StagedUnit|Document {ws: $ws})-[r]->()
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n {ws: $ws}) WHERE NOT n:KgApiKey AND NOT n:KgJob AND NOT n:KgMeta AND NOT n:KgSchema AND NOT n:KgRestore AND NOT n:KgSavedResult
  AND NOT n:KgSession AND NOT n:KgServer AND NOT n:KgMergeDecision
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
