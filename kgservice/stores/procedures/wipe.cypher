// wipe: delete every node and relationship, in batches (tests and `kg restore --replace`).
// parameters: none
// returns: nothing
MATCH (n)
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
