// merge_decisions_all: every stored entity-resolution decision, by pair (kg dump).
// parameters: none
// returns: record (the MergeDecision as JSON)
MATCH (d:KgMergeDecision {ws: $ws})
RETURN d.record AS record
ORDER BY d.a, d.b
