// life_retracted: archived (retracted) units by id, or all of them.
// parameters: $ids (list of unit ids, or null for all)
// returns: id, json (the unit), change (the change that retracted it), at, reason
MATCH (r:RetractedUnit {ws: $ws})
WHERE $ids IS NULL OR r.id IN $ids
RETURN r.id AS id, r.json AS json, r.change AS change, r.at AS at, r.reason AS reason
ORDER BY r.id
