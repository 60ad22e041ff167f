// life_change_get: lifecycle changes by id (kg purge rewrites their document texts; kg restore
// skips the ones the history has).
// parameters: $ids (change ids)
// returns: id, json
MATCH (c:Change {ws: $ws})
WHERE c.id IN $ids
RETURN c.id AS id, c.json AS json
