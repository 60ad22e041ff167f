// wipe: delete the knowledge (units, nodes, relations, staging, the change log) in batches, for
// `kg restore --replace`. Service state survives: API keys (:KgApiKey), ingest jobs (:KgJob)
// and the change-log version (:KgMeta), so a restore does not lock the team out or forget queued
// work, and the version only ever grows: the store logs an "everything" change around the wipe
// (Neo4jStore.wipe), which tells every server to clear its caches. A version restarting at 0
// could be overtaken by the restore's own ingests before a server noticed the reset.
// parameters: none
// returns: nothing
MATCH (n) WHERE NOT n:KgApiKey AND NOT n:KgJob AND NOT n:KgMeta
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
