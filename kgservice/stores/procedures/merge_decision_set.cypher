// merge_decision_set: keep one entity-resolution decision, replacing one of the same pair. The
// node has no relationships and survives a replacing restore's wipe (wipe.cypher), like a saved
// result: it judges two names, not the graph.
// parameters: $a, $b (the pair's keys, a <= b), $record (the MergeDecision as JSON)
// returns: nothing
MERGE (d:KgMergeDecision {ws: $ws, a: $a, b: $b})
SET d.record = $record
