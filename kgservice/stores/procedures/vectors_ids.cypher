// vectors_ids: every node id that has a vector.
// parameters: none
// returns: node_id (one row each)
MATCH (v:KgVector {ws: $ws})
RETURN v.node_id AS node_id
