// saved_result_create: keep one saved result (graphify save-result / POST /v1/results), shared by
// every server of this database. Names are unique (a timestamp and a random part), so MERGE only
// guards a retried transaction from storing it twice.
// parameters: $result_name, $date (ISO), $record (the SavedResult as JSON)
// returns: nothing
MERGE (r:KgSavedResult {ws: $ws, name: $result_name})
ON CREATE SET r.date = $date, r.record = $record
