// vectors_clear: delete every node vector and the record of their model, in batches (a
// recreate, before the index is made again for the new dimension).
// parameters: none
// returns: nothing
MATCH (v:KgVector {ws: $ws})
CALL (v) { DETACH DELETE v } IN TRANSACTIONS OF 10000 ROWS;
MATCH (m:KgVectorSet {ws: $ws})
DELETE m
