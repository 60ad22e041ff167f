// life_changes: the lifecycle history, oldest first (append order).
// parameters: none
// returns: json (the ChangeRecord)
MATCH (c:Change {ws: $ws})
WHERE c.ord IS NOT NULL
RETURN c.json AS json
ORDER BY c.ord
