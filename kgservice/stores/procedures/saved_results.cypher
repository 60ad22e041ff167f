// saved_results: every saved result, oldest first.
// parameters: none
// returns: record (the SavedResult as JSON)
MATCH (r:KgSavedResult {ws: $ws})
RETURN r.record AS record
ORDER BY r.date, r.name
