// aliases_all: every duplicate alias (merged-away unit id -> the unit it was merged into), for kg dump.
// parameters: none
// returns: id, unit
MATCH (a:UnitAlias {ws: $ws})
RETURN a.id AS id, a.unit AS unit
ORDER BY id
