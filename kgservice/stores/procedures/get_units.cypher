// get_units: stored JSON form of the given units.
// parameters: $ids (list of unit ids)
// returns: id, json
MATCH (u:Unit)
WHERE u.id IN $ids
RETURN u.id AS id, u.json AS json
