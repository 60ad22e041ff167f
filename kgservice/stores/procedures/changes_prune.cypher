// changes_prune: drop change-log entries at or below a seq (a process that had not seen them
// notices the gap and clears its caches, which is always correct).
// parameters: $below (highest seq to drop), $limit (rows per call)
// returns: deleted
MATCH (c:KgChange {ws: $ws})
WHERE c.seq <= $below
WITH c LIMIT $limit
DELETE c
RETURN count(*) AS deleted
