// page_units: all units in id order, one page at a time (keyset pagination).
// parameters: $after (last id of the previous page, '' for the first), $limit
// returns: id, json
MATCH (u:Unit {ws: $ws})
WHERE u.id > $after
RETURN u.id AS id, u.json AS json
ORDER BY u.id
LIMIT $limit
