// wipe: delete the knowledge (units, nodes, relations, staging, the change log) in batches, for
// `kg restore --replace`. Service state survives: API keys (:KgApiKey) and ingest jobs (:KgJob),
// so a restore does not lock the team out or forget queued work. The change log goes too: its
// version restarting at 0 tells every server to clear its caches.
// parameters: none
// returns: nothing
MATCH (n) WHERE NOT n:KgApiKey AND NOT n:KgJob
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
