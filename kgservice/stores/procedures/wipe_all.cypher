// wipe_all: delete every node and relationship, service state included, in batches (tests only).
// Relationships first, as in wipe.cypher: a node batch would carry every edge of its hubs.
// parameters: none
// returns: nothing
MATCH ()-[r]->()
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n)
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
