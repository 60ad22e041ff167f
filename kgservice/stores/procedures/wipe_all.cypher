// wipe_all: delete every node and relationship, service state included, in batches (tests only).
// parameters: none
// returns: nothing
MATCH (n)
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
