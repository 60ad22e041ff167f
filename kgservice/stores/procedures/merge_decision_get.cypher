// merge_decision_get: the entity-resolution decision stored for one pair of label keys
// (kgservice/extraction/decisions.py), shared by every server of this database.
// parameters: $a, $b (the pair's keys, a <= b)
// returns: record (the MergeDecision as JSON), no row when the pair was never decided
MATCH (d:KgMergeDecision {ws: $ws, a: $a, b: $b})
RETURN d.record AS record
